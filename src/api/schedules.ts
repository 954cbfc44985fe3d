/**
 * Schedules: create or replace one (cron, every or at), list, read, delete
 * (docs/schedules-and-events.md). The rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { z } from "zod";
import { ScheduleListSchema, ScheduleParams, ScheduleResultSchema, ScheduleSpecSchema } from "../job/schedule-spec";
import { operation } from "./operation";

export const SCHEDULE_OPERATIONS = {
  putSchedule: operation({
    access: "operate",
    method: "put",
    path: "/v1/schedules/{name}",
    summary: "Create or replace a schedule (cron, everyMs or at)",
    params: ScheduleParams,
    body: ScheduleSpecSchema,
    response: ScheduleResultSchema.extend({ created: z.boolean().meta({ description: "true (201): the schedule is new; false (200): it replaced one." }) }),
    status: "created",
    errors: ["conflict"],
  }),
  listSchedules: operation({
    access: "read",
    method: "get",
    path: "/v1/schedules",
    summary: "Every schedule, with its next run and last fire",
    response: ScheduleListSchema,
    errors: [],
  }),
  getSchedule: operation({
    access: "read",
    method: "get",
    path: "/v1/schedules/{name}",
    summary: "One schedule",
    params: ScheduleParams,
    response: ScheduleResultSchema,
    errors: ["not_found"],
    client: (call) => async (name: string) => (await call(name)).schedule,
  }),
  deleteSchedule: operation({
    access: "operate",
    method: "delete",
    path: "/v1/schedules/{name}",
    summary: "Delete a schedule (jobs it already fired stay)",
    params: ScheduleParams,
    response: z.object({ deleted: z.literal(true) }),
    errors: ["not_found", "conflict"],
  }),
};
