/**
 * What the retention capability keeps beside the core's store: what this
 * instance knows of its completed jobs' retention (completed-sweep.ts), so a
 * sweep seeks only when one is due.
 *
 * @module
 */
import type { HomeStore } from "../jobs/home-store";
import type { CompletedSweep } from "./completed-sweep";

export interface RetentionStore extends HomeStore {
  readonly completed: CompletedSweep;
}
