import { describe, expect, it } from "vitest";
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameIsPathSegment,
} from "../../../packages/capstan-dev/src/devcluster/validation/names.ts";

// Messages as apimachinery v0.32 builds them (note Go's double space before "or" in the examples).
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const KEY_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe("DNS names", () => {
  it("accepts RFC 1123 labels and refuses upper case, edges and dots with their own messages", () => {
    expect(isDNS1123Label("my-name")).toEqual([]);
    expect(isDNS1123Label("123-abc")).toEqual([]);
    expect(isDNS1123Label("My-Name")).toEqual([LABEL_MSG]);
    expect(isDNS1123Label("-a")).toEqual([LABEL_MSG]);
    expect(isDNS1123Label("a.b")).toEqual(["must not contain dots"]);
    expect(isDNS1123Label("a".repeat(64))).toEqual(["must be no more than 63 characters"]);
  });

  it("accepts subdomains up to 253 characters", () => {
    expect(isDNS1123Subdomain("example.com")).toEqual([]);
    expect(isDNS1123Subdomain("Example.com")).toEqual([SUBDOMAIN_MSG]);
    expect(isDNS1123Subdomain("a..b")).toEqual([SUBDOMAIN_MSG]);
    expect(isDNS1123Subdomain("a".repeat(254))).toEqual(["must be no more than 253 characters"]);
    expect(isDNS1123Subdomain("a".repeat(253))).toEqual([]);
    expect(isDNS1123Subdomain("a\n")).toEqual([SUBDOMAIN_MSG]);
  });

  it("requires a DNS-1035 label to start with a letter", () => {
    expect(isDNS1035Label("abc-123")).toEqual([]);
    expect(isDNS1035Label("1abc")).toEqual([
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it("checks a generateName as if a suffix followed its trailing dash", () => {
    expect(nameIsDNSSubdomain("web-", true)).toEqual([]);
    expect(nameIsDNSSubdomain("web-", false)).toEqual([SUBDOMAIN_MSG]);
    expect(nameIsDNSLabel("Web-", true)).toEqual([LABEL_MSG]);
  });
});

describe("qualified names and label values", () => {
  it("accepts prefixed and bare keys", () => {
    expect(isQualifiedName("app")).toEqual([]);
    expect(isQualifiedName("example.com/My_Name.1")).toEqual([]);
  });

  it("reports the prefix and name parts separately", () => {
    expect(isQualifiedName("/a")).toEqual(["prefix part must be non-empty"]);
    expect(isQualifiedName("Example.com/a")).toEqual(["prefix part " + SUBDOMAIN_MSG]);
    expect(isQualifiedName("example.com/")).toEqual(["name part must be non-empty", KEY_NAME_MSG]);
    expect(isQualifiedName("-a")).toEqual([KEY_NAME_MSG]);
    expect(isQualifiedName("a".repeat(64))).toEqual(["name part must be no more than 63 characters"]);
    expect(isQualifiedName(`${"a".repeat(254)}/b`)).toEqual(["prefix part must be no more than 253 characters"]);
  });

  it("refuses a key with two slashes with the whole-key message", () => {
    expect(isQualifiedName("a/b/c")).toEqual([
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]);
  });

  it("accepts empty label values and counts their length in bytes (the 1.32 message says characters)", () => {
    expect(isValidLabelValue("")).toEqual([]);
    expect(isValidLabelValue("my_value")).toEqual([]);
    expect(isValidLabelValue("a b")).toEqual([VALUE_MSG]);
    expect(isValidLabelValue("a".repeat(64))).toEqual(["must be no more than 63 characters"]);
    expect(isValidLabelValue("é".repeat(32))).toEqual(["must be no more than 63 characters", VALUE_MSG]);
  });
});

describe("path segment names", () => {
  it("refuses '.', '..', '/' and '%' and allows anything else", () => {
    expect(isPathSegmentName(".")).toEqual(["may not be '.'"]);
    expect(isPathSegmentName("..")).toEqual(["may not be '..'"]);
    expect(isPathSegmentName("a/b%c")).toEqual(["may not contain '/'", "may not contain '%'"]);
    expect(isPathSegmentName("system:Admin")).toEqual([]);
    expect(nameIsPathSegment(".", true)).toEqual([]);
  });
});
