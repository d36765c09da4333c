/**
 * networking.k8s.io, as pkg/apis/networking/validation (Kubernetes 1.32) validates it: Ingresses
 * (rules, hosts, paths and their types, backends, TLS hosts and secret names, the class), NetworkPolicies
 * (the pod selector, ports, peers and IP blocks, policy types), IngressClasses (the controller, which
 * may not change, and the parameters reference).
 *
 * Objects arrive decoded with the scheme's defaults (a NetworkPolicy's policyTypes and port protocols,
 * an IngressClass parameters' scope). On update, an old object that already broke a rule added since
 * (an invalid TLS secret name, an invalid rule under a wildcard host, an invalid label value in the pod
 * selector) lets the new one keep breaking it, as the registry's validation options do.
 */
import {
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  tooLong,
} from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import { cidrContains, parseCIDRSloppy, parseIPSloppy, validateCIDR } from "../ip-address.ts";
import {
  byteLength,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  isDNS1123Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  maxLenError,
  nameIsDNS1035Label,
  nameIsDNSSubdomain,
  regexError,
} from "../names.ts";
import { isValidPortName, PORT_RANGE_MESSAGE } from "./core-service.ts";
import { type GroupValidation, type Json, record } from "./kind-validation.ts";
import { type LabelSelectorOptions, validateLabelSelector } from "./label-selector.ts";

const INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class";
/** maxLenIngressClassController. */
const MAX_CONTROLLER_LENGTH = 250;
const SUPPORTED_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"];
const INVALID_PATH_SEQUENCES = ["//", "/./", "/../", "%2f", "%2F"];
const INVALID_PATH_SUFFIXES = ["/..", "/."];
const SUPPORTED_PARAMETER_SCOPES = ["Cluster", "Namespace"];
const POLICY_TYPES = ["Ingress", "Egress"];
const NETWORK_POLICY_PROTOCOLS = ["TCP", "UDP", "SCTP"];

const WILDCARD_DNS1123_SUBDOMAIN_FMT = "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const WILDCARD_DNS1123_SUBDOMAIN_RE = new RegExp("^" + WILDCARD_DNS1123_SUBDOMAIN_FMT + "$");
const WILDCARD_DNS1123_SUBDOMAIN_ERR =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH_RE = new RegExp("^" + HTTP_PATH_FMT + "$");

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => record(v) ?? {}) : [];
}

/** IsWildcardDNS1123Subdomain. */
function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!WILDCARD_DNS1123_SUBDOMAIN_RE.test(value))
    errs.push(regexError(WILDCARD_DNS1123_SUBDOMAIN_ERR, WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com"));
  return errs;
}

/** A DNS subdomain, or a wildcard one when it has a `*`. */
function hostErrors(host: string): string[] {
  return host.includes("*") ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
}

// ---- Ingress ----

interface IngressOptions {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** validateIngressTypedLocalObjectReference (a resource backend, IngressClass parameters). */
function validateTypedLocalObjectReference(ref: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof ref["apiGroup"] === "string") {
    const group = ref["apiGroup"];
    for (const msg of isDNS1123Subdomain(group)) errs.push(invalid(path.child("apiGroup"), group, msg));
  }
  const kind = str(ref["kind"]);
  if (kind === "") errs.push(required(path.child("kind"), "kind is required"));
  else for (const msg of isPathSegmentName(kind)) errs.push(invalid(path.child("kind"), kind, msg));
  const name = str(ref["name"]);
  if (name === "") errs.push(required(path.child("name"), "name is required"));
  else for (const msg of isPathSegmentName(name)) errs.push(invalid(path.child("name"), name, msg));
  return errs;
}

/** validateIngressBackend: a resource or a service (a DNS-1035 name, a port name or number), not both. */
function validateIngressBackend(backend: Json, path: FieldPath): FieldError[] {
  const resource = record(backend["resource"]);
  const service = record(backend["service"]);
  if (resource !== undefined && service !== undefined)
    return [invalid(path, "", "cannot set both resource and service backends")];
  if (resource !== undefined) return validateTypedLocalObjectReference(resource, path.child("resource"));
  if (service === undefined) return [invalid(path, "", "resource or service backend is required")];
  const errs: FieldError[] = [];
  const namePath = path.child("service", "name");
  const name = str(service["name"]);
  if (name === "") errs.push(required(namePath, ""));
  else for (const msg of nameIsDNS1035Label(name, false)) errs.push(invalid(namePath, name, msg));
  const port = record(service["port"]) ?? {};
  const portName = str(port["name"]);
  const portNumber = typeof port["number"] === "number" ? port["number"] : 0;
  if (portName !== "" && portNumber !== 0) {
    errs.push(invalid(path, "", "cannot set both port name & port number"));
  } else if (portName !== "") {
    for (const msg of isValidPortName(portName))
      errs.push(invalid(path.child("service", "port", "name"), portName, msg));
  } else if (portNumber !== 0) {
    if (!Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535)
      errs.push(invalid(path.child("service", "port", "number"), portNumber, PORT_RANGE_MESSAGE));
  } else {
    errs.push(required(path, "port name or number is required"));
  }
  return errs;
}

/** validateHTTPIngressPath: pathType required and supported; Exact and Prefix paths absolute and clean. */
function validateHTTPIngressPath(p: Json, path: FieldPath): FieldError[] {
  const pathType = p["pathType"];
  if (typeof pathType !== "string") return [required(path.child("pathType"), "pathType must be specified")];
  const errs: FieldError[] = [];
  const value = str(p["path"]);
  const pathPath = path.child("path");
  switch (pathType) {
    case "Exact":
    case "Prefix":
      if (!value.startsWith("/")) errs.push(invalid(pathPath, value, "must be an absolute path"));
      if (value.length > 0) {
        for (const seq of INVALID_PATH_SEQUENCES)
          if (value.includes(seq)) errs.push(invalid(pathPath, value, `must not contain '${seq}'`));
        for (const suffix of INVALID_PATH_SUFFIXES)
          if (value.endsWith(suffix)) errs.push(invalid(pathPath, value, `cannot end with '${suffix}'`));
      }
      break;
    case "ImplementationSpecific":
      if (value.length > 0 && !value.startsWith("/")) errs.push(invalid(pathPath, value, "must be an absolute path"));
      break;
    default:
      errs.push(notSupported(path.child("pathType"), pathType, SUPPORTED_PATH_TYPES));
  }
  errs.push(...validateIngressBackend(record(p["backend"]) ?? {}, path.child("backend")));
  return errs;
}

/** validateIngressRuleValue: an `http` rule needs paths. */
function validateIngressRuleValue(rule: Json, path: FieldPath): FieldError[] {
  const http = record(rule["http"]);
  if (http === undefined) return [];
  const errs: FieldError[] = [];
  const paths = records(http["paths"]);
  if (paths.length === 0) errs.push(required(path.child("http", "paths"), ""));
  paths.forEach((p, i) => {
    errs.push(...validateHTTPIngressPath(p, path.child("http", "paths").index(i)));
  });
  return errs;
}

function validateIngressRules(rules: Json[], path: FieldPath, options: IngressOptions): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const host = str(rule["host"]);
    const hostPath = path.index(i).child("host");
    let wildcard = false;
    if (host !== "") {
      if (parseIPSloppy(host) !== undefined)
        errs.push(invalid(hostPath, host, "must be a DNS name, not an IP address"));
      wildcard = host.includes("*");
      for (const msg of hostErrors(host)) errs.push(invalid(hostPath, host, msg));
    }
    if (!wildcard || !options.allowInvalidWildcardHostRule) errs.push(...validateIngressRuleValue(rule, path.index(i)));
  });
  return errs;
}

function validateIngressTLS(tls: Json[], path: FieldPath, options: IngressOptions): FieldError[] {
  const errs: FieldError[] = [];
  tls.forEach((entry, t) => {
    const hosts = Array.isArray(entry["hosts"]) ? entry["hosts"].map(str) : [];
    hosts.forEach((host, i) => {
      for (const msg of hostErrors(host)) errs.push(invalid(path.index(t).child("hosts").index(i), host, msg));
    });
    if (!options.allowInvalidSecretName) {
      const secretName = str(entry["secretName"]);
      for (const msg of tlsSecretNameErrors(secretName))
        errs.push(invalid(path.index(t).child("secretName"), secretName, msg));
    }
  });
  return errs;
}

function tlsSecretNameErrors(name: string): string[] {
  return name === "" ? [] : nameIsDNSSubdomain(name, false);
}

/** The `%#v` of spec.rules when it is empty: nil, or an empty slice when the body had `rules: []`. */
function emptyRules(rules: unknown): object {
  return withGoSharpV([], Array.isArray(rules) ? "[]networking.IngressRule{}" : "[]networking.IngressRule(nil)");
}

/** ValidateIngressSpec. */
function validateIngressSpec(spec: Json, options: IngressOptions): FieldError[] {
  const path = fieldPath("spec");
  const errs: FieldError[] = [];
  const rules = records(spec["rules"]);
  const defaultBackend = record(spec["defaultBackend"]);
  if (rules.length === 0 && defaultBackend === undefined)
    errs.push(invalid(path, emptyRules(spec["rules"]), "either `defaultBackend` or `rules` must be specified"));
  if (defaultBackend !== undefined) errs.push(...validateIngressBackend(defaultBackend, path.child("defaultBackend")));
  if (rules.length > 0) errs.push(...validateIngressRules(rules, path.child("rules"), options));
  const tls = records(spec["tls"]);
  if (tls.length > 0) errs.push(...validateIngressTLS(tls, path.child("tls"), options));
  if (typeof spec["ingressClassName"] === "string") {
    const className = spec["ingressClassName"];
    for (const msg of nameIsDNSSubdomain(className, false))
      errs.push(invalid(path.child("ingressClassName"), className, msg));
  }
  return errs;
}

function specOf(obj: Json): Json {
  return record(obj["spec"]) ?? {};
}

/** ValidateIngressCreate: the spec, and the class annotation agreeing with ingressClassName. */
function validateIngressCreate(ingress: Json): FieldError[] {
  const spec = specOf(ingress);
  const errs = validateIngressSpec(spec, { allowInvalidSecretName: false, allowInvalidWildcardHostRule: false });
  const annotations = record(record(ingress["metadata"])?.["annotations"]) ?? {};
  const annotation = annotations[INGRESS_CLASS_ANNOTATION];
  const className = spec["ingressClassName"];
  if (typeof annotation === "string" && typeof className === "string" && annotation !== className) {
    // Go's path: `annotations` as a root, the key as a child.
    errs.push(
      invalid(
        fieldPath("annotations").child(INGRESS_CLASS_ANNOTATION),
        annotation,
        "must match `ingressClassName` when both are specified",
      ),
    );
  }
  return errs;
}

/** ValidateIngressUpdate: the spec, with what the stored object already broke allowed to stay. */
function validateIngressUpdate(next: Json, old: Json): FieldError[] {
  const oldSpec = specOf(old);
  const allowInvalidSecretName = records(oldSpec["tls"]).some(
    (t) => tlsSecretNameErrors(str(t["secretName"])).length > 0,
  );
  const allowInvalidWildcardHostRule = records(oldSpec["rules"]).some(
    (rule) => str(rule["host"]).includes("*") && validateIngressRuleValue(rule, fieldPath("")).length > 0,
  );
  return validateIngressSpec(specOf(next), { allowInvalidSecretName, allowInvalidWildcardHostRule });
}

// ---- NetworkPolicy ----

/** ValidateNetworkPolicyPort: protocol, port number or name, endPort only after a numeric port. */
function validateNetworkPolicyPort(port: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const protocol = port["protocol"];
  if (typeof protocol === "string" && !NETWORK_POLICY_PROTOCOLS.includes(protocol))
    errs.push(notSupported(path.child("protocol"), protocol, NETWORK_POLICY_PROTOCOLS));
  const value = port["port"];
  const endPort = typeof port["endPort"] === "number" ? port["endPort"] : undefined;
  const validPort = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;
  if (typeof value === "number") {
    if (!validPort(value)) errs.push(invalid(path.child("port"), value, PORT_RANGE_MESSAGE));
    if (endPort !== undefined) {
      // Go reports the port, not the endPort, as the bad value here.
      if (endPort < value) errs.push(invalid(path.child("endPort"), value, "must be greater than or equal to `port`"));
      if (!validPort(endPort)) errs.push(invalid(path.child("endPort"), endPort, PORT_RANGE_MESSAGE));
    }
  } else if (typeof value === "string") {
    if (endPort !== undefined)
      errs.push(invalid(path.child("endPort"), endPort, "may not be specified when `port` is non-numeric"));
    for (const msg of isValidPortName(value)) errs.push(invalid(path.child("port"), value, msg));
  } else if (endPort !== undefined) {
    errs.push(invalid(path.child("endPort"), endPort, "may not be specified when `port` is not specified"));
  }
  return errs;
}

/** ValidateIPBlock: a CIDR, and excepts strictly inside it. */
function validateIPBlock(block: Json, path: FieldPath): FieldError[] {
  const cidrText = str(block["cidr"]);
  if (cidrText === "") return [required(path.child("cidr"), "")];
  const errs = validateCIDR(path.child("cidr"), cidrText);
  const cidr = parseCIDRSloppy(cidrText);
  if (cidr === undefined) return errs;
  const excepts = Array.isArray(block["except"]) ? block["except"].map(str) : [];
  excepts.forEach((text, i) => {
    const exceptPath = path.child("except").index(i);
    const bad = validateCIDR(exceptPath, text);
    errs.push(...bad);
    const except = parseCIDRSloppy(text);
    if (except === undefined) return;
    if (!cidrContains(cidr, except.network) || except.v4 !== cidr.v4 || cidr.prefix >= except.prefix)
      errs.push(invalid(exceptPath, text, "must be a strict subset of `cidr`"));
  });
  return errs;
}

/** ValidateNetworkPolicyPeer: at least one of the selectors or an IP block, and an IP block alone. */
function validateNetworkPolicyPeer(peer: Json, options: LabelSelectorOptions, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let peers = 0;
  const podSelector = record(peer["podSelector"]);
  if (podSelector !== undefined) {
    peers++;
    errs.push(...validateLabelSelector(podSelector, path.child("podSelector"), options));
  }
  const namespaceSelector = record(peer["namespaceSelector"]);
  if (namespaceSelector !== undefined) {
    peers++;
    errs.push(...validateLabelSelector(namespaceSelector, path.child("namespaceSelector"), options));
  }
  const ipBlock = record(peer["ipBlock"]);
  if (ipBlock !== undefined) {
    peers++;
    errs.push(...validateIPBlock(ipBlock, path.child("ipBlock")));
  }
  if (peers === 0) errs.push(required(path, "must specify a peer"));
  else if (peers > 1 && ipBlock !== undefined)
    errs.push(forbidden(path, "may not specify both ipBlock and another peer"));
  return errs;
}

/** The `%#v` of &spec.PolicyTypes (a pointer to the slice prints as the slice). */
function policyTypesValue(types: string[]): object {
  return withGoSharpV(types, `[]networking.PolicyType{${types.map(goQuote).join(", ")}}`);
}

/** ValidateNetworkPolicySpec. */
function validateNetworkPolicySpec(spec: Json, options: LabelSelectorOptions): FieldError[] {
  const path = fieldPath("spec");
  const errs = validateLabelSelector(record(spec["podSelector"]) ?? {}, path.child("podSelector"), options);
  const rules = (direction: "ingress" | "egress", peersField: "from" | "to") => {
    records(spec[direction]).forEach((rule, i) => {
      const rulePath = path.child(direction).index(i);
      records(rule["ports"]).forEach((port, j) => {
        errs.push(...validateNetworkPolicyPort(port, rulePath.child("ports").index(j)));
      });
      records(rule[peersField]).forEach((peer, j) => {
        errs.push(...validateNetworkPolicyPeer(peer, options, rulePath.child(peersField).index(j)));
      });
    });
  };
  rules("ingress", "from");
  rules("egress", "to");
  const types = Array.isArray(spec["policyTypes"]) ? spec["policyTypes"].map(str) : [];
  if (types.length > POLICY_TYPES.length) {
    errs.push(invalid(path.child("policyTypes"), policyTypesValue(types), "may not specify more than two policyTypes"));
    return errs;
  }
  types.forEach((type, i) => {
    if (!POLICY_TYPES.includes(type)) errs.push(notSupported(path.child("policyTypes").index(i), type, POLICY_TYPES));
  });
  return errs;
}

/** ValidationOptionsForNetworking: a stored pod selector that already breaks the label-value rule may keep doing so. */
function networkPolicyOptions(old: Json | undefined): LabelSelectorOptions {
  if (old === undefined) return {};
  const selector = record(specOf(old)["podSelector"]) ?? {};
  return { allowInvalidLabelValueInSelector: validateLabelSelector(selector, fieldPath("")).length > 0 };
}

// ---- IngressClass ----

/** IsDomainPrefixedPath: `<DNS subdomain>/<HTTP path>`. */
function validateDomainPrefixedPath(value: string, path: FieldPath): FieldError[] {
  if (value === "") return [required(path, "")];
  const slash = value.indexOf("/");
  const host = slash < 0 ? value : value.slice(0, slash);
  const rest = slash < 0 ? "" : value.slice(slash + 1);
  if (slash < 0 || host === "" || rest === "")
    return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((msg) => invalid(path, host, msg));
  if (!HTTP_PATH_RE.test(rest)) errs.push(invalid(path, rest, regexError("Invalid path", HTTP_PATH_FMT)));
  return errs;
}

function validateIngressClassParameters(parameters: unknown, path: FieldPath): FieldError[] {
  const params = record(parameters);
  if (params === undefined) return [];
  const errs = validateTypedLocalObjectReference(params, path);
  const scope = params["scope"];
  if (typeof scope !== "string") {
    errs.push(required(path.child("scope"), ""));
    return errs;
  }
  if (!SUPPORTED_PARAMETER_SCOPES.includes(scope)) {
    errs.push(notSupported(path.child("scope"), scope, SUPPORTED_PARAMETER_SCOPES));
    return errs;
  }
  const namespace = params["namespace"];
  if (scope === "Namespace") {
    if (typeof namespace !== "string") {
      errs.push(required(path.child("namespace"), "`parameters.scope` is set to 'Namespace'"));
    } else {
      for (const msg of isDNS1123Label(namespace)) errs.push(invalid(path.child("namespace"), namespace, msg));
    }
  }
  if (scope === "Cluster" && typeof namespace === "string")
    errs.push(forbidden(path.child("namespace"), "`parameters.scope` is set to 'Cluster'"));
  return errs;
}

/** ValidateIngressClass: the controller (a domain-prefixed path of at most 250 bytes) and the parameters. */
function validateIngressClass(ic: Json): FieldError[] {
  const spec = specOf(ic);
  const path = fieldPath("spec");
  const controller = str(spec["controller"]);
  const errs: FieldError[] = [];
  if (byteLength(controller) > MAX_CONTROLLER_LENGTH)
    errs.push(tooLong(path.child("controller"), MAX_CONTROLLER_LENGTH));
  errs.push(...validateDomainPrefixedPath(controller, path.child("controller")));
  errs.push(...validateIngressClassParameters(spec["parameters"], path.child("parameters")));
  return errs;
}

/** ValidateIngressClassUpdate: the controller may not change. */
function validateIngressClassUpdate(next: Json, old: Json): FieldError[] {
  const controller = str(specOf(next)["controller"]);
  const errs =
    controller === str(specOf(old)["controller"])
      ? []
      : [invalid(fieldPath("spec", "controller"), controller, "field is immutable")];
  return [...errs, ...validateIngressClass(next)];
}

export const networkingValidation: GroupValidation = {
  ingresses: { create: validateIngressCreate, update: validateIngressUpdate },
  networkpolicies: {
    create: (np) => validateNetworkPolicySpec(specOf(np), networkPolicyOptions(undefined)),
    // The strategy runs ValidateNetworkPolicy and ValidateNetworkPolicyUpdate: the spec twice.
    update: (next, old) => {
      const options = networkPolicyOptions(old);
      return [...validateNetworkPolicySpec(specOf(next), options), ...validateNetworkPolicySpec(specOf(next), options)];
    },
  },
  ingressclasses: { create: validateIngressClass, update: validateIngressClassUpdate },
};
