/**
 * `operator({ name })`: the object an operator author fills with controllers and Kopf-style
 * handlers, then starts on the runtime's manager.
 *
 * ## Expected flow
 * ```ts
 * const op = operator({ name: "exchangerates" });
 * op.on.create(ExchangeRate, async ({ spec, adopt, api }) => { ... });
 * op.on.update(ExchangeRate, async ({ diff }) => { ... });
 * op.on.delete(ExchangeRate, async () => { ... });        // finalizer added and removed for you
 * op.timer(ExchangeRate, { interval: "1h" }, async ({ obj, patch }) => { ... });
 * op.daemon(ExchangeRate, async ({ signal }) => { ... }); // runs until the object goes away
 * op.controller(ExchangeRate).owns(ConfigMap).reconcile(async (er, ctx) => { ... });
 * await op.start({ client, signal });                     // resolves once stopped
 * ```
 *
 * `start` registers the CRDs of the `defineResource` kinds it uses (unless `registerCrds: false`),
 * builds one runtime controller per handled kind (and namespace) whose reconcile function runs
 * the handlers (processing.ts), replays the declared controllers on the same manager (shared
 * informers: one watch per kind and scope), and runs the manager until the signal aborts.
 *
 * ## Guarantees
 * - One object is never handled by two handlers at once: every handler, timer and raw-event
 *   handler of a kind runs inside that kind's controller, one key per worker (the work queue's
 *   guarantee). Daemons are the exception: they run beside the handlers (daemons.ts).
 * - Handlers run at least once per cause; after a crash between a handler's side effect and the
 *   write of its progress record, that one handler runs again (once per crash), never the ones
 *   whose success was stored. Details: processing.ts and docs/handlers.md.
 * - An operator with nothing registered starts all the same (a warning says so), serves its
 *   health and metrics endpoints and runs until stopped, as a controller-runtime manager does.
 * - When `start` settles, every daemon has returned (or was given up on after the graceful
 *   shutdown timeout and logged), and the manager has released every timer and socket it held.
 *
 * ## Caveats
 * - `controller(kind)` returns a recording builder with the runtime builder's methods; the
 *   controller itself is built when the operator starts (it needs the client).
 */
import type { Logger } from "pino";
import pino from "pino";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ObjectOf, ResourceKind } from "../client/types.ts";
import { toCrd } from "../resources/crd.ts";
import type { PermissionNeed } from "../resources/rbac.ts";
import type { CustomResource } from "../resources/resource-types.ts";
import { DEFAULT_MAX_CONCURRENT_RECONCILES } from "../runtime/controller.ts";
import type { WatchOptions } from "../runtime/controller-builder.ts";
import { ensureCrds } from "../runtime/crd-registration.ts";
import { type Duration, toMilliseconds } from "../runtime/duration.ts";
import type { WhenIdleOptions } from "../runtime/idleness.ts";
import { Manager, type ManagerOptions, type ManagerState } from "../runtime/manager.ts";
import type { ShardingConfig } from "../runtime/sharding.ts";
import type { MutatingHandler, ValidatingHandler } from "../webhooks/admission.ts";
import type { SpokeConversion } from "../webhooks/conversion.ts";
import { WebhookServer, type WebhookServerOptions } from "../webhooks/webhook-server.ts";
import { type AdmissionHandlerOptions, AdmissionHandlers, type AdmissionWebhook } from "./admission-handlers.ts";
import { ConversionHandlers, type ConversionWebhook } from "./conversion-handlers.ts";
import { DEFAULT_BACKOFF_MS } from "./daemons.ts";
import { DeferredControllerBuilder, type OwnsOptions } from "./deferred-builder.ts";
import { parseField } from "./diff.ts";
import type {
  ChangeCause,
  ChangeContext,
  ChangeHandlerSpec,
  DaemonContext,
  DaemonOptions,
  DaemonSpec,
  DeleteHandlerOptions,
  EssenceOf,
  EventContext,
  EventHandlerOptions,
  EventHandlerSpec,
  HandlerFn,
  HandlerOptions,
  TimerContext,
  TimerOptions,
  TimerSpec,
} from "./handlers.ts";
import { normalizeHandlerId, type OperatorNames, operatorNames } from "./naming.ts";
import { KindProcessor, type OperatorTestHooks } from "./processing.ts";
import {
  hasStatusSubresource,
  type OperatorRequirements,
  operatorPermissions,
  operatorRequirements,
  type PermissionOptions,
} from "./requirements.ts";
import { shardAdmissionConfig, shardAdmissionWebhooks } from "./shard-admission-webhooks.ts";
import {
  type Defaulter,
  defaulterHandler,
  type Validator,
  validatorHandler,
  validatorOperations,
} from "./typed-admission.ts";
import { type WebhookClientConfig, withWebhookConversion } from "./webhook-configurations.ts";
import { registerWebhookConfigurations } from "./webhook-registration.ts";

export type { OperatorRequirements } from "./requirements.ts";
export { DeferredControllerBuilder, type OwnsOptions };

/** Options of {@link operator}. */
export interface OperatorOptions {
  /** Lower-case DNS label; names the finalizer and annotations (`<name>.capstan.dev/...`). */
  name: string;
  /**
   * What handlers and reconcilers send themselves through `api` / `ctx.client`, which
   * registration cannot see, e.g. the ConfigMaps an `on.create` handler applies:
   * `permissions: [needs.apply(ConfigMap)]`, or the pods a reconciler reads and deletes:
   * `needs.custom(Pod, ["get", "delete"])`. Added to {@link Operator.permissions}, so
   * `capstan generate rbac` grants them.
   */
  permissions?: readonly (PermissionNeed | readonly PermissionNeed[])[];
}

/** Options of {@link Operator.start}: the manager's, plus what the operator layer adds. */
export interface OperatorStartOptions extends Omit<ManagerOptions, "name" | "namespace"> {
  /** Stops the operator gracefully when aborted. */
  signal?: AbortSignal;
  /**
   * Watch only these namespaces (default: all). Cluster-scoped kinds ignore it. Controllers
   * declared with `op.controller` default to the namespace when exactly one is given; with
   * several, they watch what their own watch options say (all namespaces by default).
   */
  namespaces?: readonly string[];
  /** Register the CRDs of the `defineResource` kinds the operator uses (default true). */
  registerCrds?: boolean;
  /** How long CRD registration may take (default 60 s). */
  crdTimeout?: Duration;
  /**
   * Objects of one kind handled in parallel (default {@link DEFAULT_WORKERS}); one object is
   * never handled by two workers at once, whatever this is.
   */
  workers?: number;
  /**
   * The webhook server of `on.validate`/`on.mutate` handlers (started only when there are some):
   * port (default 9443), host, `certDir` with `tls.crt`/`tls.key` (default controller-runtime's
   * `/tmp/k8s-webhook-server/serving-certs`) or `tls` in memory.
   */
  webhookServer?: WebhookServerOptions;
  /**
   * The operator registers its webhooks itself, calling its webhook server through this client
   * config (Kopf's managed admission): a `url` base (`{port}` in it becomes the server's port) or
   * a `service`, and the `caBundle` (base64 PEM). At start it creates or replaces its
   * Validating/MutatingWebhookConfigurations (`<name>-validating`, `<name>-mutating`) and registers
   * the CRDs of kinds it converts with `conversion.strategy: Webhook`. Without it, nothing of the
   * sort is written, and registering a CRD keeps the conversion the cluster has (the one
   * `capstan generate crds` writes). Needs write access to the configurations.
   */
  managedWebhooks?: WebhookClientConfig & {
    /**
     * `false`: only the converted CRDs are registered with their conversion; the caller registers
     * the admission configurations itself (`capstan-dev/testing` does, as an admin). Default true.
     */
    configurations?: boolean;
  };
  /** Crash-simulation hooks for tests. */
  hooks?: OperatorTestHooks;
}

/**
 * Kopf handles every object concurrently; handlers mostly wait on the network, so the engine runs
 * as many objects at once as a controller does by default (16: measured, see
 * `DEFAULT_MAX_CONCURRENT_RECONCILES`), which bounds the load one operator puts on the API server.
 * Per object, handling stays strictly sequential.
 */
export const DEFAULT_WORKERS = DEFAULT_MAX_CONCURRENT_RECONCILES;

interface KindHandlers {
  kind: ResourceKind;
  change: ChangeHandlerSpec[];
  timers: TimerSpec[];
  daemons: DaemonSpec[];
  events: EventHandlerSpec[];
  ids: Set<string>;
}

/** Change handler registration: `(kind, fn)` or `(kind, options, fn)`. */
export interface ChangeRegistrar<O, V = undefined> {
  <T extends KubeObject>(
    kind: ResourceKind<T>,
    fn: HandlerFn<ChangeContext<T, V extends undefined ? EssenceOf<T> : V>>,
  ): void;
  <T extends KubeObject>(
    kind: ResourceKind<T>,
    options: O & HandlerOptions<T>,
    fn: HandlerFn<ChangeContext<T, V extends undefined ? EssenceOf<T> : V>>,
  ): void;
}

/** The `op.on` namespace. */
export interface OnRegistry {
  /** The object appeared with no handled state stored (a new object, or one never handled before). */
  readonly create: ChangeRegistrar<object>;
  /** The essence (spec, labels, annotations) differs from the last handled one. */
  readonly update: ChangeRegistrar<object>;
  /** The object is being deleted; the operator's finalizer holds it until these succeed. */
  readonly delete: ChangeRegistrar<Omit<DeleteHandlerOptions<KubeObject>, keyof HandlerOptions<KubeObject>>>;
  /** First sight of an already handled object after the operator (re)started. */
  readonly resume: ChangeRegistrar<object>;
  /** A create or update that changed one field (`"spec.size"`): `old`/`new` are that field's values. */
  field<T extends KubeObject>(kind: ResourceKind<T>, field: string, fn: HandlerFn<ChangeContext<T, unknown>>): void;
  field<T extends KubeObject>(
    kind: ResourceKind<T>,
    field: string,
    options: HandlerOptions<T>,
    fn: HandlerFn<ChangeContext<T, unknown>>,
  ): void;
  /**
   * A validating admission handler, served by the operator's webhook server: return to allow,
   * throw `AdmissionDenied` to deny (see docs/webhooks.md).
   */
  validate<T extends KubeObject>(kind: ResourceKind<T>, fn: ValidatingHandler<T>): void;
  validate<T extends KubeObject>(
    kind: ResourceKind<T>,
    options: AdmissionHandlerOptions,
    fn: ValidatingHandler<T>,
  ): void;
  /** A mutating admission handler: change `ctx.obj` (a copy) or return the object to admit. */
  mutate<T extends KubeObject>(kind: ResourceKind<T>, fn: MutatingHandler<T>): void;
  mutate<T extends KubeObject>(kind: ResourceKind<T>, options: AdmissionHandlerOptions, fn: MutatingHandler<T>): void;
  /** Every raw watch event (ADDED, MODIFIED, DELETED); errors are logged and never retried. */
  event<T extends KubeObject>(kind: ResourceKind<T>, fn: HandlerFn<EventContext<T>>): void;
  event<T extends KubeObject>(
    kind: ResourceKind<T>,
    options: EventHandlerOptions<T>,
    fn: HandlerFn<EventContext<T>>,
  ): void;
}

/** Holds an operator's controllers and handlers; see the module documentation. */
export class Operator {
  readonly name: string;
  /** Annotation prefix, finalizer and progress keys this operator writes. */
  readonly names: OperatorNames;
  readonly on: OnRegistry;
  private readonly kinds = new Map<string, KindHandlers>();
  private readonly controllers: DeferredControllerBuilder<KubeObject>[] = [];
  private readonly admission: AdmissionHandlers;
  private readonly conversion = new ConversionHandlers();
  private webhookServer: WebhookServer | undefined;
  private started = false;
  private manager: Manager | undefined;
  private processors: KindProcessor[] = [];
  private readonly declaredPermissions: readonly PermissionNeed[];
  private settleRegistration: { resolve(): void; reject(err: unknown): void } = { resolve() {}, reject() {} };
  /**
   * Settles once {@link start} is past CRD registration: resolves when the operator's CRDs are
   * registered (or registration is skipped, or it was stopped first), rejects with start's error
   * when it failed before that (a 403 on its CRDs, say). `capstan-dev/testing`'s `run` waits for it, so
   * a test sees a start-up failure as `run` rejecting, even when the CRDs were already served.
   */
  readonly registered: Promise<void>;

  constructor(options: OperatorOptions) {
    this.registered = new Promise<void>((resolve, reject) => {
      this.settleRegistration = { resolve, reject };
    });
    // Nobody need wait for it: a failed start is reported by start's own promise.
    this.registered.catch(() => undefined);
    this.names = operatorNames(options.name);
    this.name = options.name;
    this.declaredPermissions = (options.permissions ?? []).flat();
    this.admission = new AdmissionHandlers(options.name);
    const admission =
      (type: "validating" | "mutating") =>
      (kind: ResourceKind, a: unknown, b?: unknown): void => {
        this.assertNotStarted();
        const [options, fn] = b === undefined ? [{}, a] : [a, b];
        this.admission.add(type, kind, options as AdmissionHandlerOptions, fn as ValidatingHandler);
      };
    const change =
      (cause: ChangeCause) =>
      (kind: ResourceKind, a: unknown, b?: unknown): void => {
        const [options, fn] = b === undefined ? [{}, a] : [a, b];
        this.addChange(kind, cause, undefined, options as DeleteHandlerOptions<KubeObject>, fn as HandlerFn<never>);
      };
    this.on = {
      create: change("create") as OnRegistry["create"],
      update: change("update") as OnRegistry["update"],
      delete: change("delete") as OnRegistry["delete"],
      resume: change("resume") as OnRegistry["resume"],
      validate: admission("validating") as OnRegistry["validate"],
      mutate: admission("mutating") as OnRegistry["mutate"],
      field: ((kind: ResourceKind, field: string, a: unknown, b?: unknown) => {
        const [options, fn] = b === undefined ? [{}, a] : [a, b];
        this.addChange(kind, "field", parseField(field), options as HandlerOptions<KubeObject>, fn as HandlerFn<never>);
      }) as OnRegistry["field"],
      event: ((kind: ResourceKind, a: unknown, b?: unknown) => {
        const [options, fn] = b === undefined ? [{}, a] : [a, b];
        const entry = this.entry(kind);
        const id = this.claimId(
          entry,
          (options as EventHandlerOptions<KubeObject>).id,
          fn,
          `event-${entry.events.length + 1}`,
        );
        entry.events.push({
          kind,
          id,
          fn: fn as HandlerFn<EventContext<KubeObject>>,
          options: options as EventHandlerOptions<KubeObject>,
        });
      }) as OnRegistry["event"],
    };
  }

  /**
   * The admission handlers registered with `on.validate` and `on.mutate` (for generation and
   * tests), and, given a `sharding` option with `admission`, the webhooks assigning new objects of
   * the ring's kinds to members (shard-admission-webhooks.ts).
   */
  webhooks(options: { sharding?: boolean | ShardingConfig } = {}): readonly AdmissionWebhook[] {
    const sharding = this.shardAdmissionWebhooks(options.sharding);
    return sharding.length === 0 ? this.admission.all() : [...this.admission.all(), ...sharding];
  }

  /** The shard assignment webhooks of `sharding` (none unless its `admission` is on). */
  private shardAdmissionWebhooks(sharding: boolean | ShardingConfig | undefined): AdmissionWebhook[] {
    const config = shardAdmissionConfig(sharding);
    if (config === undefined || typeof sharding !== "object") return [];
    // The ring's kinds as the coordinator has them: handled and reconciled kinds, and what controllers own.
    const kinds = [
      ...[...this.kinds.values()].map((e) => e.kind),
      ...this.controllers.flatMap((c) => [c.kind as ResourceKind, ...c.kinds().owns]),
    ];
    return shardAdmissionWebhooks({
      operatorName: this.name,
      ring: sharding.ring ?? this.name,
      kinds,
      config,
      sharding: () => this.manager?.sharding,
    });
  }

  /** The ports of `/healthz`+`/readyz` and `/metrics` once started (when served). */
  get endpoints(): { healthProbe?: number; metrics?: number } {
    return this.manager?.endpoints ?? {};
  }

  /** Where `/healthz`+`/readyz` and `/metrics` listen once started, and whether metrics are HTTPS. */
  get endpointAddresses(): Manager["endpointAddresses"] {
    return this.manager?.endpointAddresses ?? {};
  }

  /** The port the webhook server listens on (once `start` has started it). */
  get webhookPort(): number | undefined {
    return this.webhookServer?.listening ? this.webhookServer.port : undefined;
  }

  /**
   * controller-runtime's CustomValidator, as an object: `validateCreate`, `validateUpdate` and
   * `validateDelete` (each optional) return to allow, optionally with warnings, and throw
   * `AdmissionDenied` to deny. One validating webhook, asking the API server only for the
   * operations whose methods are given. Options as `op.on.validate`'s (`id` defaults to `validator`).
   */
  validator<T extends KubeObject>(
    kind: ResourceKind<T>,
    validator: Validator<T>,
    options: Omit<AdmissionHandlerOptions, "operations"> = {},
  ): void {
    this.assertNotStarted();
    const operations = validatorOperations(validator);
    this.admission.add(
      "validating",
      kind,
      { id: "validator", ...options, operations },
      validatorHandler(validator) as unknown as ValidatingHandler,
    );
  }

  /**
   * controller-runtime's CustomDefaulter, as an object: `default(obj, ctx)` fills in `obj` (a
   * copy) in place, and Capstan answers with the JSON Patch. One mutating webhook on CREATE and
   * UPDATE (kubebuilder's default). Options as `op.on.mutate`'s (`id` defaults to `defaulter`).
   */
  defaulter<T extends KubeObject>(
    kind: ResourceKind<T>,
    defaulter: Defaulter<T>,
    options: AdmissionHandlerOptions = {},
  ): void {
    this.assertNotStarted();
    this.admission.add(
      "mutating",
      kind,
      { id: "defaulter", ...options },
      defaulterHandler(defaulter) as unknown as MutatingHandler,
    );
  }

  /**
   * The conversion webhook of a kind defined with several versions: `kind.version` (the first of
   * its `versions`, the one your code reads and writes) is the hub, and each other version gives a
   * function to the hub and one back. The operator's webhook server answers the API server's
   * ConversionReviews with them; `capstan generate crds` gives the CRD `conversion.strategy: Webhook`.
   *
   * ```ts
   * op.convert(Machine, {
   *   v1alpha1: {
   *     toHub: (old: MachineV1alpha1) => ({ ...old, spec: { position: old.spec.switchPosition } }),
   *     fromHub: (hub) => ({ ...hub, spec: { switchPosition: hub.spec.position } }),
   *   },
   * });
   * ```
   *
   * @throws Error when the functions do not cover exactly the kind's other versions.
   */
  convert<K extends CustomResource>(
    kind: K,
    spokes: Readonly<Record<string, SpokeConversion<KubeObject, ObjectOf<K>>>>,
  ): void {
    this.assertNotStarted();
    this.conversion.add(kind, spokes as Readonly<Record<string, SpokeConversion>>);
  }

  /** The kinds registered with {@link convert} (for generation and tests). */
  conversions(): readonly ConversionWebhook[] {
    return this.conversion.all();
  }

  /** A level-triggered controller for `kind` (the runtime's builder API; built at start). */
  controller<T extends KubeObject>(kind: ResourceKind<T>, options?: WatchOptions<T>): DeferredControllerBuilder<T> {
    this.assertNotStarted();
    const builder = new DeferredControllerBuilder<T>(kind, options);
    this.controllers.push(builder as unknown as DeferredControllerBuilder<KubeObject>);
    return builder;
  }

  /** Runs `fn` every `interval` for each object of `kind` (not while it is being deleted). */
  timer<T extends KubeObject>(kind: ResourceKind<T>, options: TimerOptions<T>, fn: HandlerFn<TimerContext<T>>): void {
    const entry = this.entry(kind);
    const intervalMs = toMilliseconds(options.interval);
    if (intervalMs <= 0) throw new Error(`timer on ${kind.kind}: interval must be > 0`);
    const id = this.claimId(entry, options.id, fn, `timer-${entry.timers.length + 1}`);
    entry.timers.push({
      kind,
      id,
      intervalMs,
      initialDelayMs: toMilliseconds(options.initialDelay ?? 0),
      idleMs: toMilliseconds(options.idle ?? 0),
      fn: fn as unknown as HandlerFn<TimerContext<KubeObject>>,
      options: options as unknown as TimerOptions<KubeObject>,
    });
  }

  /** Runs `fn` once per object of `kind` for as long as it exists; `ctx.signal` says when to stop. */
  daemon<T extends KubeObject>(kind: ResourceKind<T>, fn: HandlerFn<DaemonContext<T>>): void;
  daemon<T extends KubeObject>(kind: ResourceKind<T>, options: DaemonOptions<T>, fn: HandlerFn<DaemonContext<T>>): void;
  daemon<T extends KubeObject>(kind: ResourceKind<T>, a: unknown, b?: unknown): void {
    const [options, fn] = (b === undefined ? [{}, a] : [a, b]) as [DaemonOptions<T>, HandlerFn<DaemonContext<T>>];
    const entry = this.entry(kind);
    const id = this.claimId(entry, options.id, fn, `daemon-${entry.daemons.length + 1}`);
    entry.daemons.push({
      kind,
      id,
      initialDelayMs: toMilliseconds(options.initialDelay ?? 0),
      backoffMs: toMilliseconds(options.backoff ?? DEFAULT_BACKOFF_MS),
      fn: fn as unknown as HandlerFn<DaemonContext<KubeObject>>,
      options: options as unknown as DaemonOptions<KubeObject>,
    });
  }

  /** What the operator watches, owns and writes (for RBAC and CRD registration); see requirements.ts. */
  requirements(): OperatorRequirements {
    const required = operatorRequirements(this.kinds.values(), this.controllers);
    // A kind it converts has its CRD registered too: the CRD is what calls the conversion webhook.
    const converted = this.conversion.all().map((c) => c.kind);
    const missing = converted.filter((k) => !required.crds.some((c) => c.crdName === k.crdName));
    return missing.length === 0 ? required : { ...required, crds: [...required.crds, ...missing] };
  }

  /**
   * The permission needs of {@link requirements}, for `deriveRules` / `rbacManifests`: exactly the
   * verbs of the requests Capstan sends for this operator, plus what was declared with
   * `operator({ permissions })`; see `operatorPermissions` in requirements.ts.
   */
  permissions(options: PermissionOptions = {}): PermissionNeed[] {
    const ringKinds = [...[...this.kinds.values()].map((e) => e.kind), ...this.controllers.map((c) => c.kind)];
    return operatorPermissions(this.name, this.requirements(), this.declaredPermissions, options, ringKinds);
  }

  /**
   * Runs the operator until `options.signal` aborts (resolves) or the manager fails (rejects:
   * leadership lost, caches not synced, CRDs not Established). Call once.
   */
  async start(options: OperatorStartOptions): Promise<void> {
    this.assertNotStarted();
    this.started = true;
    const {
      signal,
      namespaces,
      registerCrds,
      crdTimeout,
      hooks,
      workers,
      webhookServer,
      managedWebhooks,
      ...managerOptions
    } = options;
    const logger: Logger = (options.logger ?? pino({ level: "info" })).child({ operator: this.name });
    // With one namespace, declared controllers default to it too (the manager's namespace).
    const only = namespaces?.length === 1 ? namespaces[0] : undefined;
    const mgr = new Manager({ ...managerOptions, name: this.name, logger, ...(only ? { namespace: only } : {}) });
    this.manager = mgr;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) stop.abort();
    const drainMs = toMilliseconds(options.gracefulShutdownTimeout ?? "30s");
    const shardWebhooks = this.shardAdmissionWebhooks(managerOptions.sharding);
    const webhookCount = this.admission.all().length + shardWebhooks.length + this.conversion.all().length;
    if (this.kinds.size === 0 && this.controllers.length === 0 && webhookCount === 0) {
      // Runs anyway, as a controller-runtime manager without controllers does: health endpoints up.
      logger.warn(
        `operator ${this.name} registers no handlers or controllers, so it does nothing yet; add op.controller(Kind).reconcile(fn) or op.on.create(Kind, fn) before starting it`,
      );
    }
    try {
      if (webhookCount > 0) {
        // Every replica serves webhooks, leader or not (as controller-runtime's webhook server).
        const server = new WebhookServer({
          ...webhookServer,
          logger: webhookServer?.logger ?? logger,
          observer: webhookServer?.observer ?? mgr.metrics.webhookObserver(),
        });
        // Handlers read through the operator's own client (ctx.api), so they act under its identity.
        for (const { path, spec } of this.admission.specs(mgr.client as KubeClient)) server.register(path, spec);
        for (const { path, spec } of this.conversion.specs()) server.register(path, spec);
        // Every shard webhook shares one handler and path: the request names the kind.
        const shard = shardWebhooks[0];
        if (shard !== undefined) {
          server.register(shard.path, {
            name: "shard assignment",
            type: "mutating",
            fn: shard.fn,
            timeoutMs: shard.timeoutMs,
          });
        }
        this.webhookServer = server;
        await server.start();
        logger.info({ port: server.port, webhooks: server.paths() }, "webhook server listening");
        // Not ready while it does not serve: the API server's calls would fail.
        mgr.addReadyCheck("webhook", () => server.startedCheck());
      }
      const port = this.webhookServer?.port;
      const clientConfig =
        managedWebhooks?.url !== undefined && port !== undefined
          ? { ...managedWebhooks, url: managedWebhooks.url.replace("{port}", String(port)) }
          : managedWebhooks;
      if (clientConfig !== undefined && clientConfig.configurations !== false) {
        const webhooks = [...this.admission.all(), ...shardWebhooks];
        await registerWebhookConfigurations(
          mgr.client as KubeClient,
          { name: this.name, webhooks, clientConfig },
          stop.signal,
        );
        logger.info({ webhooks: webhooks.map((w) => w.name) }, "webhook configurations registered");
      }
      if (registerCrds ?? true) {
        const crds = this.requirements().crds.map((k) => {
          const converted = this.conversion.all().find((c) => c.kind.crdName === k.crdName);
          if (converted === undefined || clientConfig === undefined) return toCrd(k);
          return withWebhookConversion(toCrd(k), converted, clientConfig);
        });
        try {
          if (crds.length > 0) await ensureCrds(mgr.client, crds, { signal: stop.signal, timeout: crdTimeout, logger });
        } catch (err) {
          // Stopped while registering (a restart during start-up): a stop, not a failure.
          if (signal?.aborted) return;
          throw err;
        }
      }
      this.settleRegistration.resolve();
      if (stop.signal.aborted) return;
      for (const c of this.controllers) c.replay(mgr);
      const scopes = namespaces !== undefined && namespaces.length > 0 ? [...namespaces] : [undefined];
      for (const entry of this.kinds.values()) {
        for (const ns of entry.kind.namespaced ? scopes : [undefined]) {
          this.buildProcessor(mgr, entry, ns, logger, stop.signal, hooks, workers ?? DEFAULT_WORKERS);
        }
      }
      await mgr.start(stop.signal);
    } catch (err) {
      this.settleRegistration.reject(err); // no effect once registration succeeded
      throw err;
    } finally {
      this.settleRegistration.resolve(); // stopped before or during registration
      signal?.removeEventListener("abort", onAbort);
      stop.abort();
      await Promise.all(this.processors.map((p) => p.stop(drainMs)));
      await this.webhookServer?.stop();
      // A manager that never started (CRD registration failed) did not close the client it built.
      if (mgr.state === "idle" && options.client === undefined) await mgr.client.close();
    }
  }

  /**
   * Where the operator is: the manager's state once `start` was called (`syncing`, `candidate`,
   * `leading` = handlers running, `stopping`, `stopped`), `idle` before.
   */
  get state(): ManagerState {
    return this.manager?.state ?? "idle";
  }

  /**
   * Resolves once the operator has nothing to do now: caches synced, no key queued or being
   * handled, no daemon at work outside `ctx.sleep`, every write of its client seen by its informers
   * (`Manager.whenIdle`). What `capstan-dev/testing`'s `cluster.advance` waits for after each step
   * of the clock. Rejects with `NotIdleError` after `timeout`, with the signal's reason on abort.
   *
   * @throws Error (rejected) when the operator was not started.
   */
  whenIdle(options?: WhenIdleOptions): Promise<void> {
    if (this.manager === undefined) return Promise.reject(new Error(`operator ${this.name} has not started`));
    return this.manager.whenIdle(options);
  }

  /** What keeps the operator from being idle right now (empty when it is, or has not started). */
  busy(): string[] {
    return this.manager?.idleness.busy() ?? [];
  }

  /** Daemons alive right now, over every kind (diagnostics, tests). */
  runningDaemons(): number {
    return this.processors.reduce((n, p) => n + p.runningDaemons(), 0);
  }

  private buildProcessor(
    mgr: Manager,
    entry: KindHandlers,
    namespace: string | undefined,
    logger: Logger,
    stopSignal: AbortSignal,
    hooks: OperatorTestHooks | undefined,
    workers: number,
  ): void {
    const kind = entry.kind;
    const { sharding } = mgr;
    const name = `${kind.kind.toLowerCase()}-handlers${namespace === undefined ? "" : `-${namespace}`}`;
    const processor = new KindProcessor({
      kind,
      controller: name,
      names: this.names,
      changeHandlers: entry.change,
      timers: entry.timers,
      daemons: entry.daemons,
      events: entry.events,
      client: mgr.client as KubeClient,
      logger: logger.child({ kind: kind.kind }),
      recorder: mgr.recorderFor(this.name),
      stopSignal,
      statusSubresource: hasStatusSubresource(kind),
      hooks,
      clock: mgr.clock,
      onSettled: () => mgr.idleness.changed(),
      ...(sharding === undefined ? {} : { isDraining: sharding.controllerShard.isDraining }),
    });
    mgr.idleness.add(name, () => processor.busy());
    // Sharded: the controller's own informer (this member's share), so both see the same objects.
    const informer = mgr.informers.informerFor(kind, sharding?.scope({ namespace }) ?? { namespace });
    processor.attach(informer);
    const controller = mgr
      .controller(kind, { namespace })
      .named(name)
      .withOptions({ maxConcurrentReconciles: workers })
      .reconcile((target, ctx) => processor.reconcile(target, ctx));
    // On a hand-over the controller lets its in-flight handlers finish first, then the daemons stop.
    sharding?.track(kind, namespace, [], informer, async (key) => {
      await controller.release(key);
      await processor.release(key);
    });
    this.processors.push(processor);
  }

  private entry(kind: ResourceKind): KindHandlers {
    this.assertNotStarted();
    if (typeof kind !== "object" || kind === null || typeof kind.plural !== "string" || typeof kind.kind !== "string") {
      throw new Error("expected a kind (defineResource(...) or a capstan/core kind) as the first argument");
    }
    const key = `${kind.group}/${kind.kind}`;
    let entry = this.kinds.get(key);
    if (entry === undefined) {
      entry = { kind, change: [], timers: [], daemons: [], events: [], ids: new Set() };
      this.kinds.set(key, entry);
    } else if (entry.kind.version !== kind.version) {
      throw new Error(
        `${kind.kind}.${kind.group}: handlers are registered for version ${entry.kind.version} already; ` +
          `use one version per kind (the API server serves the same objects in every version)`,
      );
    }
    return entry;
  }

  private addChange(
    kind: ResourceKind,
    cause: ChangeCause,
    field: readonly string[] | undefined,
    options: DeleteHandlerOptions<KubeObject>,
    fn: HandlerFn<never>,
  ): void {
    if (typeof fn !== "function") throw new Error(`on.${cause}(${kind?.kind}): the handler must be a function`);
    const entry = this.entry(kind);
    const n = entry.change.filter((h) => h.cause === cause).length + 1;
    const fallback = field === undefined ? `${cause}-${n}` : `field-${field.join(".")}`;
    const named = fn.name && field !== undefined ? `${fn.name}-${field.join(".")}` : undefined;
    const id = this.claimId(entry, options.id ?? named, fn, fallback);
    entry.change.push({ kind, id, cause, field, fn: fn as ChangeHandlerSpec["fn"], options });
  }

  /** A unique, annotation-safe id: the explicit one, else the function's name, else `fallback`. */
  private claimId(entry: KindHandlers, explicit: string | undefined, fn: unknown, fallback: string): string {
    const fnName = typeof fn === "function" && fn.name !== "" && fn.name !== "anonymous" ? fn.name : undefined;
    const id = normalizeHandlerId(explicit ?? fnName ?? fallback);
    if (entry.ids.has(id)) {
      throw new Error(
        `${entry.kind.kind}: two handlers share the id "${id}"; give one of them an explicit { id } (ids key progress annotations and status fields)`,
      );
    }
    entry.ids.add(id);
    return id;
  }

  private assertNotStarted(): void {
    if (this.started) throw new Error(`operator ${this.name} has started; register handlers before start()`);
  }
}

/** Creates an operator; see {@link Operator}. */
export function operator(options: OperatorOptions): Operator {
  return new Operator(options);
}
