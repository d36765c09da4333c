import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  admitCustomObject,
  validateCustomResource,
  validateScaleSpec,
  validateScaleStatus,
  validateTypeMeta,
} from "../../../packages/capstan-dev/src/devcluster/validation/custom-resource.ts";
import { validateEmbeddedResources } from "../../../packages/capstan-dev/src/devcluster/validation/embedded-meta.ts";
import { fieldErrorMessage } from "../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import { validateListSetsAndMaps } from "../../../packages/capstan-dev/src/devcluster/validation/list-types.ts";
import type { JSONSchemaProps } from "../../../packages/capstan-dev/src/devcluster/validation/schema-types.ts";

const schema = parse(`
type: object
properties:
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string}
      replicas: {type: integer, default: 1, minimum: 0}
      tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
      routes:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [host, path]
        items: {type: object, properties: {host: {type: string}, path: {type: string}}}
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
`) as JSONSchemaProps;

const msgs = (errs: { type: string; field: string }[]) => errs.map((e) => fieldErrorMessage(e as never));

describe("list types", () => {
  it("reports the second occurrence of a duplicated set element", () => {
    expect(msgs(validateListSetsAndMaps(schema, { spec: { tags: ["a", "b", "a", "a", "b"] } }))).toEqual([
      'spec.tags[2]: Duplicate value: "a"',
      'spec.tags[4]: Duplicate value: "b"',
    ]);
  });

  it("reports duplicate map keys with the key as the value, a map[string]interface{} printed with %#v", () => {
    const spec = {
      ports: [{ name: "http", port: 80 }, { name: "http", port: 8080 }, { port: 1 }, { port: 2 }],
      routes: [
        { host: "a", path: "/" },
        { host: "a", path: "/x" },
        { path: "/x", host: "a" },
      ],
    };
    expect(msgs(validateListSetsAndMaps(schema, { spec }))).toEqual([
      'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}',
      "spec.ports[3]: Duplicate value: map[string]interface {}{}",
      'spec.routes[2]: Duplicate value: map[string]interface {}{"host":"a", "path":"/x"}',
    ]);
  });

  it("requires objects in a map list", () => {
    expect(msgs(validateListSetsAndMaps(schema, { spec: { ports: [{ name: "a" }, "b"] } }))).toEqual([
      'spec.ports[1]: Invalid value: "b": must be an object for an array of list-type map',
    ]);
  });
});

describe("embedded resources", () => {
  it("requires apiVersion and kind and checks embedded metadata with path-segment names", () => {
    const obj = { spec: { template: { metadata: { name: "a/b", labels: { "-x": "y" } } } } };
    expect(msgs(validateEmbeddedResources(schema, obj))).toEqual([
      "spec.template.apiVersion: Required value: must not be empty",
      "spec.template.kind: Required value: must not be empty",
      "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
      "spec.template.metadata.labels: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
  });

  it("checks apiVersion and kind shapes and metadata type", () => {
    const obj = { spec: { template: { apiVersion: "a/b/c", kind: "Pod_X", metadata: "x" } } };
    expect(msgs(validateEmbeddedResources(schema, obj))).toEqual([
      'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      "spec.template.kind: Invalid value: \"Pod_X\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.template.metadata: Invalid value: "x": invalid metadata: expected object, got string',
    ]);
    expect(
      validateEmbeddedResources(schema, { spec: { template: { apiVersion: "v1", kind: "Pod", metadata: {} } } }),
    ).toEqual([]);
  });
});

describe("the admission path", () => {
  it("defaults, prunes and then validates a custom object", () => {
    const obj = {
      apiVersion: "x.io/v1",
      kind: "App",
      metadata: { name: "a" },
      spec: { image: "nginx", extra: 1, tags: ["a", "a"], template: { apiVersion: "v1", kind: "Pod", anything: 1 } },
    };
    expect(admitCustomObject(schema, obj)).toEqual(["spec.extra"]);
    expect(obj.spec).toEqual({
      image: "nginx",
      replicas: 1,
      tags: ["a", "a"],
      template: { apiVersion: "v1", kind: "Pod", anything: 1 },
    });
    expect(msgs(validateCustomResource(schema, obj))).toEqual(['spec.tags[1]: Duplicate value: "a"']);
  });

  it("puts schema errors before embedded and list-type errors, as the strategy appends them", () => {
    const obj = { spec: { replicas: -1, tags: ["x", "x"], template: {} } };
    expect(msgs(validateCustomResource(schema, obj))).toEqual([
      "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
      "spec.image: Required value",
      "spec.template.apiVersion: Required value: must not be empty",
      "spec.template.kind: Required value: must not be empty",
      'spec.tags[1]: Duplicate value: "x"',
    ]);
  });

  it("validates a status write against the status schema with a status prefix only", () => {
    const status: JSONSchemaProps = { type: "object", properties: { ready: { type: "boolean" } } };
    expect(msgs(validateCustomResource(status, { ready: "yes" }, { fieldPrefix: "status" }))).toEqual([
      'status.ready: Invalid value: "string": ready in body must be of type boolean: "string"',
    ]);
  });
});

describe("type meta and scale", () => {
  it("requires the served kind and apiVersion", () => {
    expect(msgs(validateTypeMeta({ apiVersion: "x.io/v2", kind: "Other" }, "x.io", "v1", "App"))).toEqual([
      'kind: Invalid value: "Other": must be App',
      'apiVersion: Invalid value: "x.io/v2": must be x.io/v1',
    ]);
    expect(validateTypeMeta({ apiVersion: "x.io/v1", kind: "App" }, "x.io", "v1", "App")).toEqual([]);
  });

  it("checks replicas at the scale paths, with the raw path as the field", () => {
    const scale = {
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.selector",
    };
    expect(validateScaleSpec({ spec: {} }, scale)).toEqual([]);
    expect(msgs(validateScaleSpec({ spec: { replicas: -1 } }, scale))).toEqual([
      ".spec.replicas: Invalid value: -1: should be a non-negative integer",
    ]);
    expect(msgs(validateScaleSpec({ spec: { replicas: 2 ** 31 } }, scale))).toEqual([
      ".spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647",
    ]);
    expect(msgs(validateScaleSpec({ spec: { replicas: "3" } }, scale))).toEqual([
      ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64",
    ]);
    expect(msgs(validateCustomResource(schema, { spec: { image: "x", replicas: -2 } }, { scale }))).toEqual([
      "spec.replicas: Invalid value: -2: spec.replicas in body should be greater than or equal to 0",
      ".spec.replicas: Invalid value: -2: should be a non-negative integer",
    ]);
    expect(msgs(validateScaleStatus({ status: { replicas: 1, selector: 5 } }, scale))).toEqual([
      '.status.selector: Invalid value: "": .status.selector accessor error: 5 is of the type int64, expected string',
    ]);
  });
});
