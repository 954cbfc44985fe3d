// The payload of each job type, on both ends: producers' enqueue and the handlers' `payload`.
// The import loads edgequeue's types into every program that compiles this file: an augmentation alone does not,
// so a tsconfig that includes only some files (tests, say) would fail with "module 'edgequeue' cannot be found".
import type {} from "edgequeue";

declare module "edgequeue" {
  interface JobTypes {
    "welcome.email": { to: string };
    "order.fulfil": { orderId: string };
  }
}
