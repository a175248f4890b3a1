//! Every webhook the sandbox sends, in one wing: built as the service's deliveries are,
//! with exact amounts (`notify`), made to happen on demand for a payment of the sandbox's
//! own (`trigger`), the delivery of any spec's own event for a request the role model
//! settled (`settled`), and sent, signed, and sent again on the service's schedule, each attempt
//! kept in the delivery log (`outbox`). The delivery log's and the re-push's operations are
//! answered by their handler (`handlers::delivery_log`), over the same log.

mod notify;
mod outbox;
mod settled;
mod trigger;

pub(crate) use notify::{Notification, amount, notify, object, text};
pub(crate) use outbox::{Outbox, OutboxHost, deliver, resend, rotate_key};
pub(crate) use settled::notify_settled;
pub(crate) use trigger::{EVENTS, trigger};
