// The payload of each job type, on both ends: producers' enqueue and the handlers' `payload`.
declare module "edgequeue" {
  interface JobTypes {
    "welcome.email": { to: string };
    "order.fulfil": { orderId: string };
  }
}
export {};
