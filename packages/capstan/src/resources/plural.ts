/**
 * Resource names from a kind, the way Kubernetes' own code generators derive them (gengo's
 * plural namer, which `kubebuilder`/`client-gen` use):
 * - lower-cased kind;
 * - ends in `s`, `x`, `z`, `ch` or `sh` -> `+es` (`Ingress` -> `ingresses`, `Box` -> `boxes`, `Switch` -> `switches`);
 * - consonant + `y` -> `ies` (`Policy` -> `policies`), vowel + `y` -> `+s` (`Gateway` -> `gateways`);
 * - otherwise `+s` (`ExchangeRate` -> `exchangerates`).
 *
 * gengo also turns a final `f`/`fe` into `ves`; that guess is wrong as often as right (`Proof`,
 * `Chief`), so it is not copied: name such kinds' plural explicitly.
 */
export function pluralize(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular.length < 2) return `${singular}s`;
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (singular.endsWith("y")) {
    return /[aeiou]y$/.test(singular) ? `${singular}s` : `${singular.slice(0, -1)}ies`;
  }
  return `${singular}s`;
}
