/**
 * PodValidationOptions (core validation) as the 1.32 strategies derive them
 * (pkg/api/pod GetValidationOptionsFromPodSpecAndMeta): feature-gate defaults of 1.32, loosened on an
 * update for what the stored object already holds, so an object stored before a check existed can
 * still be updated.
 */
export interface PodValidationOptions {
  /** The spec is a pod's, not a template's (a hostNetwork pod's hostPort must equal containerPort). */
  readonly resourceIsPod?: boolean;
  /** Skip label-value syntax in affinity term selectors. */
  readonly allowInvalidLabelValueInSelector?: boolean;
  /** Skip the label selectors of topologySpreadConstraints. */
  readonly allowInvalidTopologySpreadConstraintLabelSelector?: boolean;
  /** Let a projected service-account token's path leave the volume. */
  readonly allowNonLocalProjectedTokenPath?: boolean;
  /** Let network and IPC sysctls stand in a pod on the host's network or IPC namespace. */
  readonly allowNamespacedSysctlsForHostNetAndHostIPC?: boolean;
  /** Let a hugepages quantity not be a whole number of pages. */
  readonly allowIndivisibleHugePagesValues?: boolean;
  /** Skip the pod-deletion-cost annotation's syntax. */
  readonly allowInvalidPodDeletionCost?: boolean;
  /** Let a sleep lifecycle handler sleep 0 seconds (PodLifecycleSleepActionAllowZero, off in 1.32). */
  readonly allowPodLifecycleSleepActionZeroValue?: boolean;
}
