/**
 * The conversion between a Machine's two versions, served by the operator's conversion webhook
 * (`op.convert`): `v1alpha1` (the typed version, and the hub) names the machine's own switch
 * `spec.switchPosition`, `v1` names it `spec.position`. Everything else is the same, so the
 * conversion is lossless both ways: an object read in one version and written back in the other
 * keeps every field.
 */
import type { CustomObject, ObjectOf, SpokeConversion } from "capstan";
import type { Machine, MachineV1Spec } from "./resources.ts";

type MachineV1alpha1 = ObjectOf<typeof Machine>;
/** A Machine as `v1` shows it. */
export type MachineV1 = CustomObject<typeof MachineV1Spec, undefined> & { status?: MachineV1alpha1["status"] };

/** `v1` to and from the hub (`v1alpha1`). */
export const machineV1: SpokeConversion<MachineV1, MachineV1alpha1> = {
  toHub(machine) {
    const { position, ...spec } = machine.spec;
    return { ...machine, spec: { ...spec, ...(position === undefined ? {} : { switchPosition: position }) } };
  },
  fromHub(machine) {
    const { switchPosition, ...spec } = machine.spec;
    return { ...machine, spec: { ...spec, ...(switchPosition === undefined ? {} : { position: switchPosition }) } };
  },
};
