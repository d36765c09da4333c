import type { GroupValidation } from "./kind-validation.ts";

export const autoscalingValidation: GroupValidation = {};
