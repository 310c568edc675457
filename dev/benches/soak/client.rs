//! One client connection of the soak: what it sends, what it remembers (orders in flight
//! after a disconnect), and what it records in the shared stats and ledgers.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use commerce::model::*;
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::stats::Kind;
use super::{DISCONNECT_SHARE, RESOLVE_AFTER, RESOLVE_ATTEMPTS, Shared};
use crate::common::http::{ResponseHead, raw_request_as, read_response};

/// A disconnected order, to be asked for again with its key.
pub(super) struct Pending {
    pub(super) due: Instant,
    pub(super) key: String,
    pub(super) body: Bytes,
    pub(super) attempts: u32,
}

/// One client connection and what it remembers.
pub(super) struct Client {
    pub(super) number: usize,
    pub(super) addr: SocketAddr,
    pub(super) key: String,
    pub(super) account: usize,
    pub(super) rng: StdRng,
    pub(super) stream: TcpStream,
    pub(super) buf: Vec<u8>,
    pub(super) shared: Arc<Shared>,
    /// Its latest orders, candidates for a cancel.
    pub(super) own_orders: VecDeque<OrderId>,
    /// Its latest keyed orders answered 201: (key, body, order), candidates for a replay.
    pub(super) keyed: VecDeque<(String, Bytes, OrderId)>,
    /// Its latest external references, candidates for a duplicate.
    pub(super) references: VecDeque<String>,
    pub(super) unresolved: VecDeque<Pending>,
    pub(super) sequence: u64,
}

/// Pushes `item` on a queue kept to its latest `cap` items.
pub(super) fn push_capped<T>(queue: &mut VecDeque<T>, item: T, cap: usize) {
    if queue.len() == cap {
        queue.pop_front();
    }
    queue.push_back(item);
}

impl Client {
    pub(super) async fn connect(addr: SocketAddr) -> TcpStream {
        let stream = TcpStream::connect(addr).await.expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        stream
    }

    fn next_name(&mut self, prefix: &str) -> String {
        self.sequence += 1;
        format!("{prefix}-{}-{}", self.number, self.sequence)
    }

    fn order_body(&mut self, keyed: bool) -> Bytes {
        let ids = &self.shared.ids;
        let roll = self.rng.random_range(0..100);
        let (variant, quantity, warranties) = match roll {
            0..=2 => (ids.sold_out, 1, vec![]),
            3..=12 => (ids.featured, 1, vec![ids.warranty]),
            _ => (ids.plain, self.rng.random_range(1..=3), vec![]),
        };
        let profit = ["40.00", "55.50", "12.25"][self.rng.random_range(0..3)];
        let mut body = json!({
            "full_name": "سارة حسن",
            "phone": if roll == 99 { "12345" } else { "+201112223334" },
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": ids.cairo,
            "shipping_option_id": ids.shipping,
            "lines": [{
                "variant_id": variant,
                "quantity": quantity,
                "profit": profit,
                "warranty_ids": warranties,
            }],
        });
        let repeat = !keyed && !self.references.is_empty() && self.rng.random_bool(0.02);
        let reference = if repeat {
            let at = self.rng.random_range(0..self.references.len());
            Some(self.references[at].clone())
        } else if self.rng.random_bool(0.3) {
            let reference = self.next_name("ref");
            // Only unkeyed orders' references are repeated: a keyed order asked for again
            // after a disconnect must not find its reference taken by another order.
            if !keyed {
                push_capped(&mut self.references, reference.clone(), 16);
            }
            Some(reference)
        } else {
            None
        };
        if let Some(reference) = reference {
            body["external_reference"] = json!(reference);
        }
        Bytes::from(serde_json::to_vec(&body).expect("json"))
    }

    /// The next request of `kind`: (request bytes, idempotency key and body of an order).
    fn request(
        &mut self,
        kind: Kind,
        disconnecting: bool,
    ) -> (Kind, Bytes, Option<(String, Bytes)>) {
        let ids = &self.shared.ids;
        let get = |path: &str| raw_request_as("GET", path, &self.key, &[], b"");
        let request = match kind {
            Kind::Products => get("/api/v1/products?per_page=25"),
            Kind::Product => {
                let id = if self.rng.random_bool(0.05) {
                    ids.stopped
                } else {
                    ids.products[self.rng.random_range(0..ids.products.len())]
                };
                get(&format!("/api/v1/products/{id}"))
            }
            Kind::Categories => get("/api/v1/categories"),
            Kind::ShippingOptions => get("/api/v1/shipping/options"),
            Kind::Quote => {
                let body = json!({
                    "shipping_option_id": ids.shipping,
                    "governorate_id": ids.cairo,
                    "lines": [{"variant_id": ids.featured, "quantity": 2, "profit": "50.01",
                               "warranty_ids": [ids.warranty]}],
                });
                let body = serde_json::to_vec(&body).expect("json");
                raw_request_as("POST", "/api/v1/shipping/quote", &self.key, &[], &body)
            }
            Kind::Orders => get("/api/v1/orders?per_page=25"),
            Kind::Wallet => get("/api/v1/wallet"),
            Kind::Me => get("/api/v1/me"),
            Kind::Cancel => match self.own_orders.pop_front() {
                Some(id) => raw_request_as(
                    "POST",
                    &format!("/api/v1/orders/{id}/cancel"),
                    &self.key,
                    &[],
                    br#"{"reason_note":"soak"}"#,
                ),
                None => return self.request(Kind::Orders, disconnecting),
            },
            Kind::Order | Kind::KeyedOrder | Kind::Resolve => {
                let keyed = kind != Kind::Order || disconnecting;
                let replay = keyed && !disconnecting && self.rng.random_bool(0.3);
                let (key, body) = if replay && !self.keyed.is_empty() {
                    let at = self.rng.random_range(0..self.keyed.len());
                    let (key, body, _) = &self.keyed[at];
                    (Some(key.clone()), body.clone())
                } else {
                    let key = keyed.then(|| self.next_name("soak"));
                    (key, self.order_body(keyed))
                };
                let headers: Vec<(&str, &str)> = key
                    .as_deref()
                    .map(|k| vec![("idempotency-key", k)])
                    .unwrap_or_default();
                let request = raw_request_as("POST", "/api/v1/orders", &self.key, &headers, &body);
                let kind = if keyed { Kind::KeyedOrder } else { Kind::Order };
                return (kind, request, key.map(|k| (k, body)));
            }
        };
        (kind, request, None)
    }

    /// Sends `request` on the client's connection; records the answer.
    async fn send(&mut self, kind: Kind, request: &[u8]) -> Option<ResponseHead> {
        let started = Instant::now();
        let answer = async {
            self.stream.write_all(request).await?;
            read_response(&mut self.stream, &mut self.buf).await
        }
        .await;
        let micros = started.elapsed().as_micros() as u64;
        match answer {
            Ok(head) => {
                self.shared
                    .stats
                    .lock()
                    .expect("stats")
                    .record(kind, head.status, micros);
                if head.status == 201 {
                    self.created(head);
                }
                Some(head)
            }
            Err(_) => {
                self.shared.stats.lock().expect("stats").io_errors += 1;
                self.stream = Self::connect(self.addr).await;
                None
            }
        }
    }

    /// Books the order of the 201 just read.
    fn created(&mut self, head: ResponseHead) {
        let replayed = head.header(&self.buf, "idempotent-replayed") == Some("true");
        let id = self.answered_id(head).expect("a 201 names its order");
        let mut ledger = self.shared.ledgers[self.account].lock().expect("ledger");
        ledger.created.insert(id);
        if replayed {
            ledger.replays += 1;
        } else {
            drop(ledger);
            push_capped(&mut self.own_orders, id, 256);
            // The platform task ends after the clients; a closed channel only means it stopped.
            let _ = self.shared.new_orders.send(id);
        }
    }

    /// The order id in the body of the answer just read.
    fn answered_id(&self, head: ResponseHead) -> Option<OrderId> {
        let body: Value = serde_json::from_slice(head.body(&self.buf)).ok()?;
        body["data"]["id"].as_i64().map(OrderId::new)
    }

    /// Writes all or half of `request` on a new connection and drops it 0–20 ms later.
    async fn disconnect(&mut self, kind: Kind, request: &[u8]) {
        let mut stream = Self::connect(self.addr).await;
        let upto = if self.rng.random_bool(0.5) {
            request.len()
        } else {
            request.len() / 2
        };
        // The server may already have closed its side: nothing to learn from that here.
        let _ = stream.write_all(&request[..upto]).await;
        tokio::time::sleep(Duration::from_millis(self.rng.random_range(0..20))).await;
        drop(stream);
        *self
            .shared
            .stats
            .lock()
            .expect("stats")
            .disconnects
            .entry(kind.label())
            .or_default() += 1;
    }

    /// One turn: a request drawn from the mix, sent or disconnected.
    async fn turn(&mut self) {
        let drawn = Kind::draw(&mut self.rng);
        let disconnecting = self.rng.random_bool(DISCONNECT_SHARE);
        let (kind, request, keyed) = self.request(drawn, disconnecting);
        if disconnecting {
            self.disconnect(kind, &request).await;
            if let Some((key, body)) = keyed {
                self.unresolved.push_back(Pending {
                    due: Instant::now() + RESOLVE_AFTER,
                    key,
                    body,
                    attempts: 0,
                });
            }
            if kind == Kind::Cancel {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .cancels_disconnected += 1;
            }
            return;
        }
        let answer = self.send(kind, &request).await;
        match (kind, answer.map(|head| (head.status, head))) {
            (Kind::Cancel, Some((200, _))) => {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .cancels_ok += 1;
            }
            (Kind::KeyedOrder, Some((201, head))) => self.remember_key(keyed, head),
            _ => {}
        }
    }

    /// Keeps a keyed order answered 201 for replays; counts a replay naming another order.
    fn remember_key(&mut self, keyed: Option<(String, Bytes)>, head: ResponseHead) {
        let (Some((key, body)), Some(id)) = (keyed, self.answered_id(head)) else {
            return;
        };
        match self.keyed.iter().find(|(k, _, _)| *k == key) {
            Some((_, _, first)) if *first != id => {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .replay_mismatches += 1;
            }
            Some(_) => {}
            None => push_capped(&mut self.keyed, (key, body, id), 64),
        }
    }

    /// Asks again for the oldest disconnected order, with its key: a 409 (still in flight)
    /// puts it back; any other answer is final.
    async fn resolve(&mut self) {
        let Some(mut pending) = self.unresolved.pop_front() else {
            return;
        };
        let headers = [("idempotency-key", pending.key.as_str())];
        let request = raw_request_as("POST", "/api/v1/orders", &self.key, &headers, &pending.body);
        let answer = self.send(Kind::Resolve, &request).await;
        if answer.is_none_or(|head| head.status == 409) {
            pending.attempts += 1;
            if pending.attempts >= RESOLVE_ATTEMPTS {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .unresolved += 1;
            } else {
                pending.due = Instant::now() + Duration::from_millis(250);
                self.unresolved.push_back(pending);
            }
        }
    }

    /// Turns until `deadline`, asking again for disconnected orders as they fall due; then
    /// asks for the ones left.
    pub(super) async fn run(mut self, deadline: Instant) {
        while Instant::now() < deadline {
            if self
                .unresolved
                .front()
                .is_some_and(|p| p.due <= Instant::now())
            {
                self.resolve().await;
            } else {
                self.turn().await;
            }
        }
        while let Some(due) = self.unresolved.front().map(|p| p.due) {
            tokio::time::sleep_until(due.into()).await;
            self.resolve().await;
        }
    }
}
