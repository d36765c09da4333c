/**
 * `reinvocationPolicy: IfNeeded` of mutating webhooks, as k8s.io/apiserver decides it
 * (pkg/admission/reinvocation.go, plugin/webhook/mutating/dispatcher.go and reinvocationcontext.go).
 *
 * ## Expected flow (one create or update)
 * 1. First round: every matching mutating webhook is called in order; after each call the round
 *    reports it with {@link MutatingReinvocation.called}.
 * 2. When a webhook changed the object, the IfNeeded webhooks called before it (since the previous
 *    change) are marked to be called again: they saw an object that is no longer the one stored.
 * 3. A second round runs when some webhook is marked ({@link MutatingReinvocation.secondRound}):
 *    the matching webhooks are walked in the same order and only the marked ones are called.
 *
 * ## Guarantees
 * - A webhook is called at most twice: there is no third round, whatever the second one changed.
 * - A webhook not called in the first round (rules, selectors or matchConditions) is not called in
 *   the second either, even if the object now matches it.
 * - A webhook's own change does not mark it (it is recorded after the change is accounted for).
 *
 * ## Caveats
 * kube-apiserver also reruns its in-tree mutating plugins in the second round and marks the IfNeeded
 * webhooks again when those changed the object; the embedded server has no in-tree mutating
 * admission plugin between webhooks, so only webhooks' changes count.
 */
export class MutatingReinvocation {
  /** IfNeeded webhooks called since the object last changed (previouslyInvokedReinvocableWebhooks). */
  private readonly sinceChange = new Set<string>();
  /** Webhooks to call again (reinvokeWebhooks). */
  private readonly marked = new Set<string>();
  private round: "first" | "second" = "first";

  /**
   * Records that webhook `uid` was called (or its call failed and was ignored), whether its patch
   * changed the object, and whether it asked to be called again (`IfNeeded`).
   */
  called(uid: string, changed: boolean, ifNeeded: boolean): void {
    if (changed) {
      for (const earlier of this.sinceChange) this.marked.add(earlier);
      this.sinceChange.clear();
    }
    if (ifNeeded) this.sinceChange.add(uid);
  }

  /** Whether the webhook `uid` is to be called in the current round. */
  shouldCall(uid: string): boolean {
    return this.round === "first" || this.marked.has(uid);
  }

  /** Moves to the second round; false when no webhook is to be called again (nor is there a round to start). */
  secondRound(): boolean {
    if (this.round === "second" || this.marked.size === 0) return false;
    this.round = "second";
    return true;
  }
}
