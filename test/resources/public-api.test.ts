import { describe, expect, it } from "vitest";
import * as resources from "../../packages/capstan/src/resources/index.ts";

describe("the resources layer's public surface", () => {
  it("exports what docs/resources.md tells users to import", () => {
    for (const name of [
      "defineResource",
      "toCrd",
      "isCustomResource",
      "Kube",
      "needs",
      "deriveRules",
      "rbacManifests",
      "checkVerb",
      "pluralize",
      "structuralProblems",
      "SchemaTranslationError",
      "ResourceDefinitionError",
      "InvalidVerbError",
      "VERBS",
    ]) {
      expect(resources, name).toHaveProperty(name);
    }
  });
});
