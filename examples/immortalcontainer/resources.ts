/**
 * The ImmortalContainer custom resource, as the seed defines it (group `immortalcontainer.flugel.it`,
 * version `v1alpha1`), so the seed's own manifests apply unchanged.
 */
import { defineResource, type ObjectOf, Type } from "capstan";

/** A container that must run forever: the operator keeps one pod running `spec.image`. */
export const ImmortalContainer = defineResource({
  group: "immortalcontainer.flugel.it",
  version: "v1alpha1",
  kind: "ImmortalContainer",
  scope: "Namespaced",
  shortNames: ["ic"],
  spec: Type.Object({
    /** The image the pod runs; changing it replaces the pod. */
    image: Type.String({ minLength: 1, description: "Container image to keep running" }),
  }),
  status: Type.Object({
    currentPod: Type.Optional(Type.String({ description: "Name of the pod running the container" })),
    startTimes: Type.Optional(Type.Integer({ description: "How many times the operator has started the pod" })),
  }),
  // The name becomes the pod's label value, which Kubernetes limits to 63 characters.
  validations: [
    {
      rule: "self.metadata.name.size() <= 63",
      message: "name must be no more than 63 characters (it labels the ImmortalContainer's pod)",
    },
  ],
  printerColumns: [
    { name: "Image", type: "string", jsonPath: ".spec.image" },
    { name: "Pod", type: "string", jsonPath: ".status.currentPod" },
    { name: "Starts", type: "integer", jsonPath: ".status.startTimes" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** An ImmortalContainer object, typed from the schema. */
export type ImmortalContainerObject = ObjectOf<typeof ImmortalContainer>;
