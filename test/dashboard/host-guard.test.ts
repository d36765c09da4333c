import { describe, expect, it } from "vitest";
import {
  allowedHostHeaders,
  hostAllowed,
  isLoopbackHost,
  originAllowed,
} from "../../packages/capstan-dev/src/dashboard/host-guard.ts";

describe("the dashboard's Host guard", () => {
  it("listens only on loopback names and addresses", () => {
    expect(["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"].every(isLoopbackHost)).toBe(true);
    expect(["0.0.0.0", "192.168.1.2", "example.com", "::"].some(isLoopbackHost)).toBe(false);
  });

  it("accepts only its own address or localhost, with its port", () => {
    const allowed = allowedHostHeaders("127.0.0.1", 7150);
    expect(hostAllowed("127.0.0.1:7150", allowed)).toBe(true);
    expect(hostAllowed("LOCALHOST:7150", allowed)).toBe(true);
    expect(hostAllowed("evil.example", allowed)).toBe(false);
    expect(hostAllowed("evil.example:7150", allowed)).toBe(false);
    expect(hostAllowed("127.0.0.1:7151", allowed)).toBe(false);
    expect(hostAllowed(undefined, allowed)).toBe(false);
    expect(hostAllowed("[::1]:9000", allowedHostHeaders("::1", 9000))).toBe(true);
  });

  it("takes writes only from its own origin: http, its address or localhost, its port", () => {
    const allowed = allowedHostHeaders("127.0.0.1", 7150);
    expect(originAllowed("http://127.0.0.1:7150", allowed)).toBe(true);
    expect(originAllowed("http://localhost:7150", allowed)).toBe(true);
    expect(originAllowed(undefined, allowed)).toBe(false);
    expect(originAllowed("null", allowed)).toBe(false);
    expect(originAllowed("https://127.0.0.1:7150", allowed)).toBe(false);
    expect(originAllowed("http://127.0.0.1:7151", allowed)).toBe(false);
    expect(originAllowed("http://evil.example", allowed)).toBe(false);
  });
});
