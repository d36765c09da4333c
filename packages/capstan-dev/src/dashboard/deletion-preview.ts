/**
 * What deleting an object will take with it, for the page's confirmation: its finalizers (which
 * hold the deletion until their controllers remove them) and the dependents garbage collection
 * deletes with background propagation.
 *
 * As the garbage collector decides (kube-controller-manager garbagecollector.go,
 * attemptToDeleteItem): a dependent is deleted once none of its owners is left; a dependent that
 * also has an owner that stays only loses its reference to the deleted one. So the set is the
 * closure, from the object, of the objects whose every owner is in the set or does not exist.
 *
 * Caveats: it sees the kinds the dashboard watches (the CRDs' kinds and a few built-ins): a
 * dependent of another kind is not listed, and an owner of another kind counts as existing (so its
 * dependents are not listed as deleted, which errs on the side of showing less).
 */
import type { KubeObject } from "capstan";
import type { ClusterView } from "./cluster-view.ts";
import type { ObjectLink } from "./object-detail.ts";

type OwnerReference = NonNullable<NonNullable<KubeObject["metadata"]>["ownerReferences"]>[number];

/** A dependent that goes with the object. */
export interface Dependent extends ObjectLink {
  /** The uid of the owner (in the set) through which it goes. */
  ownerUid: string;
  finalizers: string[];
}

/** The confirmation's content. */
export interface DeletionPreview {
  finalizers: string[];
  dependents: Dependent[];
}

interface Located {
  kindId: string;
  apiVersion: string;
  kind: string;
  obj: KubeObject;
}

/** The preview of deleting `obj`; see the module documentation. */
export function deletionPreview(view: ClusterView, obj: KubeObject): DeletionPreview {
  const byUid = new Map<string, Located>();
  const watched = new Set<string>();
  for (const { kind, feed } of view.kinds()) {
    const apiVersion = kind.group === "" ? kind.version : `${kind.group}/${kind.version}`;
    watched.add(`${apiVersion} ${kind.kind}`);
    for (const o of feed.objects()) {
      const uid = o.metadata?.uid;
      if (uid) byUid.set(uid, { kindId: kind.id, apiVersion, kind: kind.kind, obj: o });
    }
  }
  const root = obj.metadata?.uid ?? "";
  const doomed = new Set([root]);
  const dependents: Dependent[] = [];
  // Until nothing more goes: each pass may doom objects whose last surviving owner was doomed last pass.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [uid, located] of byUid) {
      if (doomed.has(uid)) continue;
      const refs = located.obj.metadata?.ownerReferences ?? [];
      const via = refs.find((r) => doomed.has(r.uid));
      if (via === undefined) continue;
      // An owner that stays (watched and present, or of a kind not watched) keeps the dependent.
      const gone = (r: OwnerReference) =>
        doomed.has(r.uid) || (!byUid.has(r.uid) && watched.has(`${r.apiVersion} ${r.kind}`));
      if (!refs.every(gone)) continue;
      doomed.add(uid);
      grew = true;
      const meta = located.obj.metadata ?? {};
      dependents.push({
        kindId: located.kindId,
        apiVersion: located.apiVersion,
        kind: located.kind,
        ...(meta.namespace ? { namespace: meta.namespace } : {}),
        name: meta.name ?? "",
        uid,
        ownerUid: via.uid,
        finalizers: meta.finalizers ?? [],
      });
    }
  }
  const key = (d: Dependent) => `${d.namespace ?? ""}/${d.name}`;
  dependents.sort((a, b) => a.kind.localeCompare(b.kind) || key(a).localeCompare(key(b)));
  return { finalizers: obj.metadata?.finalizers ?? [], dependents };
}
