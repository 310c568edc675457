//! What every answer and event says, shared by the ways in and the services: the JSON views
//! (`wire`, with the supply side's, webhooks' and withdrawals' views), the Egyptian Arabic
//! messages (`messages`) and the request id every answer carries (`request_id`). It reads
//! only records and the base rules, so an error or a webhook event renders itself without
//! reaching into the HTTP entry (`web/`).

pub(crate) mod messages;
pub(crate) mod request_id;
pub(crate) mod wire;
