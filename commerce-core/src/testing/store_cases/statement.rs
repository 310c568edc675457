//! The suppliers' money: statement entries written with the moves and withdrawals that cause
//! them, the supplier wallet, the refusal of a correction below zero (the races are in
//! `statement_races`).

use rust_decimal::Decimal;

use crate::domain::earnings::{WalletTotals, Withdrawn};
use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// The supplier's price of a piece of the fixture's first variant.
const SUPPLY: &str = "40.00";

pub(super) async fn supplier(store: &dyn Store, name: &str) -> Account {
    store
        .insert_account(
            NewAccount::supplier(
                name,
                format!("{}@supply.example.com", name.to_lowercase()),
                "01112345678",
            ),
            at(0),
        )
        .await
        .expect("insert supplier")
}

/// A line of `quantity` pieces of `v` whose snapshot names `supplier` at `supply` a piece.
pub(super) fn supplied(
    f: &Fixture,
    v: &Variant,
    quantity: i64,
    supplier: AccountId,
    supply: &str,
) -> NewOrderLine {
    let mut l = line(f, v, quantity, false);
    l.supplier_id = Some(supplier);
    l.supply_price = d(supply);
    l
}

pub(super) fn with_outcomes(
    order: OrderId,
    to: OrderStatus,
    when: i64,
    outcomes: Vec<(LineId, LineOutcome)>,
) -> StatusChange {
    let mut change = change(order, to, when);
    change.outcomes = outcomes;
    change
}

/// Ships `order` and delivers it at second `when` with `outcomes` (partially when any line
/// delivers fewer pieces than it has).
pub(super) async fn deliver(
    store: &dyn Store,
    order: OrderId,
    when: i64,
    outcomes: Vec<(LineId, LineOutcome)>,
    partially: bool,
) -> Order {
    move_to(
        store,
        order,
        &[OrderStatus::Confirmed, OrderStatus::Shipped],
        when - 10,
    )
    .await;
    let to = if partially {
        OrderStatus::PartiallyDelivered
    } else {
        OrderStatus::Delivered
    };
    store
        .change_order_status(with_outcomes(order, to, when, outcomes))
        .await
        .expect("deliver")
}

pub(super) async fn entries(store: &dyn Store, supplier: AccountId) -> Page<StatementEntry> {
    store
        .statement(supplier, &StatementFilter::default(), page(1, 100))
        .await
        .expect("statement")
}

/// The supplier's wallet sums with the hold's cut-off at `held_after`.
pub(super) async fn wallet(
    store: &dyn Store,
    supplier: AccountId,
    held_after: i64,
) -> WalletTotals {
    store
        .wallet_totals(supplier, at(held_after))
        .await
        .expect("wallet totals")
}

/// The reconciliation: the newest entry's balance is the wallet's `ready + held`, the kept
/// balance is every entry added, and each order entry is its pieces at its unit price.
pub(super) async fn assert_reconciled(store: &dyn Store, supplier: AccountId, held_after: i64) {
    let all = entries(store, supplier).await;
    let newest = all.items.first().map_or(Decimal::ZERO, |e| e.balance);
    let signed: Decimal = all
        .items
        .iter()
        .map(|e| match e.direction {
            Direction::Credit => e.amount,
            _ => -e.amount,
        })
        .sum();
    assert_eq!(newest, signed, "the newest balance is every entry added");
    let wallet = wallet(store, supplier, held_after).await;
    let withdrawals = store.withdrawals(supplier).await.expect("withdrawals");
    let ready = wallet.ready(Withdrawn::of(&withdrawals));
    assert_eq!(ready + wallet.held, newest, "ready + held is the balance");
    for entry in &all.items {
        if let (Some(quantity), Some(price)) = (entry.quantity, entry.unit_price) {
            assert_eq!(entry.amount, price * Decimal::from(quantity), "{entry:?}");
        }
    }
}

/// A delivery books one `delivery` credit per supplied line at the line's supply price, the
/// supplier's `expected` follows the order, a later change of delivered pieces books a
/// `correction` by the difference, and the supplier's wallet reads them (held, then ready);
/// lines without a supplier, and the marketer's wallet, are untouched.
pub async fn deliveries_and_corrections_are_booked_on_the_supplier_statement(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let s = supplier(store, "Nile").await;
    let lines = vec![
        supplied(&f, &f.variant, 3, s.id, SUPPLY),
        line(&f, &f.variant_b, 2, false),
    ];
    let order = place(store, new_order(&f, f.account.id, &number(1), lines, 1)).await;
    let w = wallet(store, s.id, 0).await;
    assert_eq!(w.totals.expected, d("120.00"), "3 pieces at 40.00 expected");
    assert_eq!(entries(store, s.id).await.total, 0);
    // Delivered: 2 of the 3 supplied pieces.
    let (l1, l2) = (order.lines[0].id, order.lines[1].id);
    let delivered = deliver(
        store,
        order.id,
        100,
        vec![(l1, delivered_of(2, 3)), (l2, LineOutcome::delivered(2))],
        true,
    )
    .await;
    let page1 = entries(store, s.id).await;
    assert_eq!(page1.total, 1);
    let e = &page1.items[0];
    assert_eq!(
        (
            e.kind,
            e.direction,
            e.quantity,
            e.unit_price,
            e.amount,
            e.balance
        ),
        (
            StatementEntryType::Delivery,
            Direction::Credit,
            Some(2),
            Some(d(SUPPLY)),
            d("80.00"),
            d("80.00")
        )
    );
    assert_eq!(
        (e.order_id, e.order_number.as_deref(), e.variant_id),
        (
            Some(order.id),
            Some(order.number.as_str()),
            Some(f.variant.id)
        )
    );
    assert_eq!(
        (e.delivered_at, e.at, e.withdrawal_id),
        (delivered.delivered_at, at(100), None)
    );
    assert_eq!(e.supplier_id, s.id);
    // Held while the cut-off is before the delivery, ready after it.
    let held = wallet(store, s.id, 50).await;
    assert_eq!(
        (held.totals.expected, held.totals.settled, held.held),
        (d("0.00"), d("80.00"), d("80.00"))
    );
    assert_eq!(held.earliest_held_delivery, Some(at(100)));
    assert_eq!(held.ready(Withdrawn::default()), d("0.00"));
    let ready = wallet(store, s.id, 200).await;
    assert_eq!(
        (ready.held, ready.ready(Withdrawn::default())),
        (d("0.00"), d("80.00"))
    );
    assert_eq!(ready.totals.settled_commission, d("0.00"));
    assert_reconciled(store, s.id, 50).await;
    // Corrections: 3 pieces (one more: a credit), then 1 (two fewer: a debit).
    store
        .set_line_outcomes(
            order.id,
            vec![(l1, LineOutcome::delivered(3))],
            None,
            at(200),
        )
        .await
        .expect("correct up");
    store
        .set_line_outcomes(order.id, vec![(l1, delivered_of(1, 3))], None, at(300))
        .await
        .expect("correct down");
    let all = entries(store, s.id).await;
    let shape: Vec<_> = all
        .items
        .iter()
        .map(|e| (e.kind, e.direction, e.quantity, e.amount, e.balance))
        .collect();
    assert_eq!(
        shape,
        vec![
            (
                StatementEntryType::Correction,
                Direction::Debit,
                Some(2),
                d("80.00"),
                d("40.00")
            ),
            (
                StatementEntryType::Correction,
                Direction::Credit,
                Some(1),
                d("40.00"),
                d("120.00")
            ),
            (
                StatementEntryType::Delivery,
                Direction::Credit,
                Some(2),
                d("80.00"),
                d("80.00")
            ),
        ],
        "newest first"
    );
    assert_eq!(all.items[0].delivered_at, delivered.delivered_at);
    assert_eq!(wallet(store, s.id, 50).await.held, d("40.00"));
    assert_reconciled(store, s.id, 50).await;
    assert_reconciled(store, s.id, 500).await;
    // A page, and the period filter ([from, to)).
    let second = store
        .statement(s.id, &StatementFilter::default(), page(2, 2))
        .await
        .unwrap();
    assert_eq!((second.total, second.items.len()), (3, 1));
    assert_eq!(second.items[0].kind, StatementEntryType::Delivery);
    let period = store
        .statement(
            s.id,
            &StatementFilter::new(Some(at(150)), Some(at(300))),
            page(1, 10),
        )
        .await
        .unwrap();
    assert_eq!(period.total, 1);
    assert_eq!(period.items[0].at, at(200));
    // An outcome-free write and a tracking URL book nothing.
    store
        .set_line_outcomes(order.id, Vec::new(), None, at(400))
        .await
        .unwrap();
    assert_eq!(entries(store, s.id).await.total, 3);
    // A cancelled order gives its expected back; another supplier sees nothing.
    let other = supplier(store, "Delta").await;
    let second_order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![supplied(&f, &f.variant, 2, s.id, "12.35")],
            500,
        ),
    )
    .await;
    assert_eq!(wallet(store, s.id, 50).await.totals.expected, d("24.70"));
    store
        .change_order_status(change(second_order.id, OrderStatus::Cancelled, 501))
        .await
        .unwrap();
    assert_eq!(wallet(store, s.id, 50).await.totals.expected, d("0.00"));
    assert_eq!(wallet(store, other.id, 50).await, WalletTotals::default());
    assert_eq!(entries(store, other.id).await.total, 0);
    // The marketer's wallet is its orders', as without suppliers.
    let orders = all_orders(store, f.account.id).await;
    assert_eq!(
        store.wallet_totals(f.account.id, at(50)).await.unwrap(),
        WalletTotals::of_orders(&orders.items, at(50))
    );
    assert_eq!(entries(store, f.account.id).await.total, 0);
}

/// A supplier's withdrawal is a `withdrawal` debit admitted against its ready balance, its
/// rejection a `withdrawal_rejected` credit; a correction that would take the balance below
/// zero is refused, by a move with outcomes or by recording outcomes, naming the shortfall
/// and writing nothing.
pub async fn a_correction_below_zero_is_refused_and_writes_nothing(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let s = supplier(store, "Nile").await;
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![supplied(&f, &f.variant, 2, s.id, SUPPLY)],
            1,
        ),
    )
    .await;
    let l1 = order.lines[0].id;
    deliver(store, order.id, 100, Vec::new(), false).await;
    // Held: nothing to withdraw yet.
    let early = store
        .request_withdrawal(withdrawal(s.id, "0.01", None), at(50), at(110))
        .await;
    assert!(
        matches!(early, Err(WithdrawalRequestError::OverReadyBalance { ready, .. }) if ready.is_zero()),
        "{early:?}"
    );
    let too_much = store
        .request_withdrawal(withdrawal(s.id, "80.01", None), no_hold(), at(110))
        .await;
    assert!(
        matches!(
            too_much,
            Err(WithdrawalRequestError::OverReadyBalance { .. })
        ),
        "{too_much:?}"
    );
    let w = store
        .request_withdrawal(withdrawal(s.id, "80.00", None), no_hold(), at(120))
        .await
        .expect("withdraw everything");
    let newest = entries(store, s.id).await.items[0].clone();
    assert_eq!(
        (
            newest.kind,
            newest.direction,
            newest.amount,
            newest.balance,
            newest.withdrawal_id
        ),
        (
            StatementEntryType::Withdrawal,
            Direction::Debit,
            d("80.00"),
            d("0.00"),
            Some(w.id)
        )
    );
    assert_eq!(
        (newest.order_id, newest.quantity, newest.unit_price),
        (None, None, None)
    );
    assert_reconciled(store, s.id, 0).await;
    // Taking a delivered piece away would leave -40.00: refused both ways.
    let before = store.order(None, order.id).await.unwrap().unwrap();
    let refused = store
        .set_line_outcomes(order.id, vec![(l1, delivered_of(1, 2))], None, at(200))
        .await;
    assert!(
        matches!(
            refused,
            Err(StoreError::SupplierShortfall { supplier, shortfall })
                if supplier == s.id && shortfall == d("40.00")
        ),
        "{refused:?}"
    );
    let refused = store
        .change_order_status(with_outcomes(
            order.id,
            OrderStatus::Archived,
            210,
            vec![(l1, delivered_of(0, 2))],
        ))
        .await;
    assert!(
        matches!(
            refused,
            Err(StatusChangeError::Store(StoreError::SupplierShortfall { shortfall, .. }))
                if shortfall == d("80.00")
        ),
        "{refused:?}"
    );
    assert_eq!(store.order(None, order.id).await.unwrap().unwrap(), before);
    assert_eq!(entries(store, s.id).await.total, 2);
    // The rejection gives the amount back; the correction then fits.
    store
        .decide_withdrawal(w.id, WithdrawalDecision::Reject { notes: None }, at(300))
        .await
        .unwrap();
    let back = entries(store, s.id).await.items[0].clone();
    assert_eq!(
        (
            back.kind,
            back.direction,
            back.amount,
            back.balance,
            back.at
        ),
        (
            StatementEntryType::WithdrawalRejected,
            Direction::Credit,
            d("80.00"),
            d("80.00"),
            at(300)
        )
    );
    store
        .set_line_outcomes(order.id, vec![(l1, delivered_of(1, 2))], None, at(400))
        .await
        .expect("the correction fits now");
    assert_eq!(entries(store, s.id).await.items[0].balance, d("40.00"));
    assert_reconciled(store, s.id, 0).await;
    // A completed withdrawal keeps its debit.
    let paid = store
        .request_withdrawal(withdrawal(s.id, "40.00", None), no_hold(), at(500))
        .await
        .unwrap();
    store
        .decide_withdrawal(
            paid.id,
            WithdrawalDecision::Complete {
                transfer_reference: "T-1".into(),
                receipt_url: None,
            },
            at(510),
        )
        .await
        .unwrap();
    assert_eq!(entries(store, s.id).await.items[0].balance, d("0.00"));
    assert_reconciled(store, s.id, 0).await;
}

/// A correction never takes from a marketer earnings it withdrew: an order delivered, its
/// whole ready balance withdrawn and paid, then a correction that would leave it with fewer
/// delivered pieces is refused with the shortfall ([`StoreError::MarketerShortfall`]),
/// writing nothing; a correction that takes nothing still applies.
pub async fn a_correction_never_takes_withdrawn_marketer_earnings(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let lines = vec![line(&f, &f.variant, 3, false)];
    let order = place(store, new_order(&f, f.account.id, &number(1), lines, 1)).await;
    let l1 = order.lines[0].id;
    deliver(store, order.id, 100, Vec::new(), false).await;
    let settled = store
        .wallet_totals(f.account.id, no_hold())
        .await
        .unwrap()
        .totals
        .settled;
    assert!(settled > Decimal::ZERO);
    let w = store
        .request_withdrawal(
            withdrawal(f.account.id, &settled.to_string(), None),
            no_hold(),
            at(200),
        )
        .await
        .expect("withdraw everything");
    let paid = WithdrawalDecision::Complete {
        transfer_reference: "TRX-1".into(),
        receipt_url: None,
    };
    store.decide_withdrawal(w.id, paid, at(210)).await.unwrap();
    let before = store.order(None, order.id).await.unwrap().unwrap();
    let refused = store
        .set_line_outcomes(order.id, vec![(l1, delivered_of(1, 3))], None, at(300))
        .await;
    assert!(
        matches!(
            &refused,
            Err(StoreError::MarketerShortfall { account, shortfall })
                if *account == f.account.id && *shortfall > Decimal::ZERO && *shortfall < settled
        ),
        "{refused:?}"
    );
    assert_eq!(store.order(None, order.id).await.unwrap().unwrap(), before);
    let after = store.wallet_totals(f.account.id, no_hold()).await.unwrap();
    assert_eq!(after.totals.settled, settled, "nothing booked");
    // A move with counts of an archive that takes pieces away is refused the same way.
    let archive = with_outcomes(
        order.id,
        OrderStatus::Archived,
        310,
        vec![(l1, delivered_of(0, 3))],
    );
    let refused = store.change_order_status(archive).await;
    assert!(
        matches!(
            refused,
            Err(StatusChangeError::Store(StoreError::MarketerShortfall { shortfall, .. }))
                if shortfall == settled
        ),
        "{refused:?}"
    );
    // Counting every piece delivered takes nothing: it applies.
    store
        .set_line_outcomes(order.id, vec![(l1, delivered_of(3, 3))], None, at(400))
        .await
        .expect("takes nothing");
}
