/**
 * A Table answer's includeObject as handlers/response.go's asTable reads it: None, Metadata (also when
 * empty or absent) and Object; any other value is 400 BadRequest. Answers that are not Tables ignore it.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "../support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
const TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1";
const t = fileFixture(async () => {
  const raw = await startRawHttpCluster();
  await raw.request("POST", CMS, { body: configMap("tabled") });
  return raw;
});

describe("includeObject", () => {
  it.each([`${CMS}?includeObject=Everything`, `${CMS}/tabled?includeObject=object`])(
    "refuses an unknown value for a Table: %s",
    async (path) => {
      const res = await t.request("GET", path, { accept: TABLE });
      expect([res.status, res.body.reason, res.body.message]).toEqual([
        400,
        "BadRequest",
        `unrecognized includeObject value: "${new URL(path, "https://x").searchParams.get("includeObject")}"`,
      ]);
    },
  );

  it("takes the known values and the empty one, and is ignored outside Tables", async () => {
    for (const value of ["", "None", "Metadata", "Object"]) {
      const res = await t.request("GET", `${CMS}?includeObject=${value}`, { accept: TABLE });
      expect([res.status, res.body.kind], value).toEqual([200, "Table"]);
    }
    expect((await t.request("GET", `${CMS}?includeObject=Everything`)).status).toBe(200);
  });
});
