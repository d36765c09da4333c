/**
 * A GET of an operator's HTTPS metrics endpoint, as Prometheus scrapes it with `insecureSkipVerify`
 * (the operator's certificate is self-signed), with a bearer token when one is given.
 */
import { request } from "node:https";

export function scrape(port: number, token?: string, path = "/metrics"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        rejectUnauthorized: false,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}
