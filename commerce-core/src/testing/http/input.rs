//! Input rules shared by every endpoint: query parameters, control characters, blank and
//! malformed values, hostile bodies.

use bytes::Bytes;
use http::Method;
use serde_json::json;

use super::fixtures::*;
use super::harness::*;

/// Invalid paging and timestamps are 422, never clamped.
pub async fn invalid_query_parameters_are_422(h: &Harness) {
    for query in [
        "per_page=0",
        "per_page=101",
        "page=0",
        "page=abc",
        "updated_since=yesterday",
    ] {
        let r = h.get(A, &format!("/api/v1/products?{query}")).await;
        r.assert_error(422, "validation_failed");
    }
    h.get(A, "/api/v1/orders?status=shipped")
        .await
        .assert_error(422, "validation_failed");
    h.get(A, "/api/v1/orders?family=lost")
        .await
        .assert_error(422, "validation_failed");
}

/// A query parameter given with an empty or blank value is a 422 naming it, never taken as
/// absent (docs/bad-input.md); an empty parameter the endpoint does not read is ignored.
pub async fn empty_query_values_are_422(h: &Harness) {
    let cases = [
        ("/api/v1/categories", "page"),
        ("/api/v1/categories", "per_page"),
        ("/api/v1/products", "page"),
        ("/api/v1/products", "per_page"),
        ("/api/v1/products", "category_id"),
        ("/api/v1/products", "updated_since"),
        ("/api/v1/products", "q"),
        ("/api/v1/orders", "page"),
        ("/api/v1/orders", "per_page"),
        ("/api/v1/orders", "status"),
        ("/api/v1/orders", "family"),
        ("/api/v1/orders", "external_reference"),
        ("/api/v1/orders", "number"),
        ("/api/v1/orders", "updated_since"),
    ];
    for (path, name) in cases {
        for query in [format!("{name}="), format!("{name}=%20"), name.to_owned()] {
            let r = h.get(A, &format!("{path}?{query}")).await;
            r.assert_error(422, "validation_failed");
            assert_eq!(r.error_fields(), vec![name], "{path}?{query}");
            assert!(
                r.json()["error"]["fields"][name][0]
                    .as_str()
                    .is_some_and(|m| !m.is_ascii()),
                "Arabic message for {path}?{query}"
            );
        }
    }
    let r = h.get(A, "/api/v1/products?per_page=&q=&page=2").await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["per_page", "q"]);
    let ignored = h.get(A, "/api/v1/products?unknown=&page=1").await;
    assert_eq!(
        ignored.status,
        200,
        "{}",
        String::from_utf8_lossy(&ignored.body)
    );
}

/// Every text field and string query parameter holds printable text: a control character
/// (NUL, a C1 control) or a bidirectional override is a 422 naming the field on every store,
/// nothing is written; tab and line breaks are text only in `note`, `address`, `reason_note`.
pub async fn control_characters_in_text_are_422(h: &Harness) {
    const REFUSED: [&str; 3] = ["\u{0}", "\u{9B}", "\u{202E}"];
    let before = h.order_count().await;
    let base = h.order_body(1, "10");
    let mut optional = base.clone();
    optional["second_phone"] = json!("01012345678");
    optional["store_name"] = json!("متجر سارة");
    optional["store_link"] = json!("https://shop.example.com/sara");
    optional["note"] = json!("كلم العميل قبل التوصيل");
    optional["external_reference"] = json!("EXT-CTRL-1");
    let fields = [
        "external_reference",
        "full_name",
        "phone",
        "second_phone",
        "address",
        "store_name",
        "store_link",
        "note",
    ];
    for field in fields {
        for bad in REFUSED {
            let mut body = optional.clone();
            let value = body[field].as_str().expect("a string field").to_owned();
            let cut = value.char_indices().nth(3).map_or(value.len(), |(i, _)| i);
            body[field] = json!(format!("{}{bad}{}", &value[..cut], &value[cut..]));
            let r = h.post(A, "/api/v1/orders", &body).await;
            r.assert_error(422, "validation_failed");
            assert_eq!(r.error_fields(), vec![field], "{field} with {bad:?}");
            assert!(
                r.json()["error"]["fields"][field][0]
                    .as_str()
                    .is_some_and(|m| !m.is_ascii()),
                "Arabic message for {field}"
            );
        }
    }
    // Tab and line breaks: text in `note` and `address`, refused in a single-line field.
    for breaks in ["\t", "\n", "\r\n"] {
        let mut body = base.clone();
        body["full_name"] = json!(format!("سارة{breaks}حسن"));
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec!["full_name"], "{breaks:?}");
    }
    assert_eq!(h.order_count().await, before, "nothing refused was written");
    let mut multi_line = base.clone();
    let address = "12 شارع النصر\nالدور التالت،\tشقة 5\r\nمدينة نصر";
    multi_line["address"] = json!(address);
    multi_line["note"] = json!("سطر أول\nسطر تاني\tبعد مسافة");
    let created = h.post(A, "/api/v1/orders", &multi_line).await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let order = created.json()["data"].clone();
    assert_eq!(order["customer"]["address"], address);
    assert_eq!(h.order_count().await, before + 1);
    // The cancel body's `reason_note` is multi-line.
    let cancel = format!("/api/v1/orders/{}/cancel", order["id"]);
    for bad in REFUSED {
        let r = h
            .post(
                A,
                &cancel,
                &json!({"reason_note": format!("العميل{bad}غيّر رأيه")}),
            )
            .await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec!["reason_note"], "{bad:?}");
    }
    let reason = "العميل غيّر رأيه\nوهيطلب تاني";
    let cancelled = h.post(A, &cancel, &json!({"reason_note": reason})).await;
    assert_eq!(cancelled.status, 200);
    assert_eq!(cancelled.json()["data"]["timeline"][1]["reason"], reason);
    // String query parameters, on the catalogue and the orders list.
    for bad in REFUSED.iter().chain(&["\t", "\n"]) {
        for (path, name) in [
            ("/api/v1/products", "q"),
            ("/api/v1/orders", "number"),
            ("/api/v1/orders", "external_reference"),
        ] {
            let value = urlencode(&format!("EG{bad}X"));
            let r = h.get(A, &format!("{path}?{name}={value}")).await;
            r.assert_error(422, "validation_failed");
            assert_eq!(r.error_fields(), vec![name], "{path}?{name}={value}");
        }
    }
    // Arabic, an emoji and a right-to-left mark are text.
    let search = urlencode("سماعة\u{200F} 🎧");
    let r = h.get(A, &format!("/api/v1/products?q={search}")).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["meta"]["total"], 0);
}

/// Bad bodies never reach a 5xx: malformed JSON, non-objects, deep nesting, huge numbers and
/// a 2 MiB body each get their 4xx.
pub async fn hostile_bodies_get_a_4xx(h: &Harness) {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge_number = format!(
        r#"{{"shipping_option_id": 1{}, "governorate_id": 1, "lines": []}}"#,
        "0".repeat(400)
    );
    for body in [
        "{",
        "[]",
        "\"text\"",
        "null",
        "{\"lines\": [1]}",
        deep.as_str(),
        huge_number.as_str(),
        "\u{feff}{}",
    ] {
        for path in ["/api/v1/orders", "/api/v1/shipping/quote"] {
            let r = h
                .request(
                    Method::POST,
                    Some("sk_demo_bench"),
                    path,
                    body.to_owned(),
                    &[],
                )
                .await;
            // 100,000 nested brackets (200,000 bytes) fit `POST /orders`'s limit, not the
            // others'.
            let config = h.engine.config();
            let limit = match path {
                "/api/v1/orders" => config.order_body_limit,
                _ => config.body_limit,
            };
            let (status, code) = match body.len() > limit {
                true => (413, "payload_too_large"),
                false => (422, "validation_failed"),
            };
            assert_eq!(r.status, status, "{path} {}", &body[..body.len().min(40)]);
            assert_eq!(r.error_code(), code);
        }
    }
    let big = vec![b' '; 2 * 1024 * 1024];
    let r = h
        .request(
            Method::POST,
            Some("sk_demo_bench"),
            "/api/v1/orders",
            big,
            &[],
        )
        .await;
    r.assert_error(413, "payload_too_large");
    let cancel = format!("/api/v1/orders/{}/cancel", h.fixture.confirmed_order);
    h.request(Method::POST, Some("sk_demo_bench"), &cancel, "[1]", &[])
        .await
        .assert_error(422, "validation_failed");
}

/// Blank and malformed input named as it should be: a 401 carries `WWW-Authenticate: Bearer`; a
/// blank `phone` is a 422 naming `phone`; an `Idempotency-Key` is 1 to 100 printable ASCII
/// characters with spaces allowed inside, anything else a 422 naming the header with a
/// message that says what is allowed (the same for a short key as for a long one).
pub async fn blank_and_malformed_input_is_named(h: &Harness) {
    let r = h
        .request(Method::GET, None, "/api/v1/me", Bytes::new(), &[])
        .await;
    r.assert_error(401, "unauthenticated");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_eq!(
        h.get("sk_nope", "/api/v1/me")
            .await
            .header("www-authenticate"),
        Some("Bearer")
    );
    // Two `Authorization` headers are ambiguous: 401, even when the first is a good key.
    let bearer = format!("Bearer {A}");
    let twice = [
        ("authorization", bearer.as_str()),
        ("authorization", "Bearer sk_nope"),
    ];
    h.request(Method::GET, None, "/api/v1/me", Bytes::new(), &twice)
        .await
        .assert_error(401, "unauthenticated");
    // A phone too long to be one is an invalid phone; money is plain decimal notation (no
    // `1_000`, no exponent) up to 1,000,000,000.
    let mut body = h.order_body(1, "10");
    body["phone"] = json!("0".repeat(40));
    let r = h.post(A, "/api/v1/orders", &body).await;
    r.assert_error(422, "validation_failed");
    assert_eq!(
        r.json()["error"]["fields"]["phone"],
        json!([crate::render::messages::INVALID_PHONE])
    );
    for profit in [
        json!("1_000"),
        json!("1e3"),
        json!("1000000000.01"),
        json!(" "),
    ] {
        let mut body = h.order_body(1, "10");
        body["lines"][0]["profit"] = profit.clone();
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(
            r.error_fields(),
            vec!["lines.0.profit".to_owned()],
            "{profit}"
        );
    }
    for blank in ["", "   "] {
        let mut body = h.order_body(1, "10");
        body["phone"] = json!(blank);
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec!["phone".to_owned()], "{blank:?}");
    }
    let body = h.order_body(1, "10");
    let spaced = h.post_idempotent(A, "order 1001", &body).await;
    assert_eq!(
        spaced.status,
        201,
        "{}",
        String::from_utf8_lossy(&spaced.body)
    );
    let long = "k".repeat(101);
    let mut messages = Vec::new();
    for bad in ["", "   ", "tab\there", long.as_str()] {
        let r = h.post_idempotent(A, bad, &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(
            r.error_fields(),
            vec!["Idempotency-Key".to_owned()],
            "{bad:?}"
        );
        messages.push(r.json()["error"]["fields"]["Idempotency-Key"][0].clone());
    }
    assert!(messages.windows(2).all(|m| m[0] == m[1]), "{messages:?}");
    assert_eq!(
        messages[0],
        json!(crate::render::messages::IDEMPOTENCY_KEY_FORM)
    );
}

/// Odd encodings and repeated headers: a query value whose percent-decoded bytes are not
/// UTF-8 is a 422 naming it (an escape that is not one is literal text); two
/// `Idempotency-Key` headers are a 422 naming the header, nothing written; an `Authorization`
/// that is not UTF-8 is a 401; the body is read as JSON whatever its `Content-Type`, and a
/// compressed body (no `Content-Encoding` is decoded) is a 422 on `body`; a member repeated
/// in the body object counts once, with its last value; BEL, ESC and a link without a host
/// or with a line break are 422s naming the field.
pub async fn odd_encodings_and_repeated_headers(h: &Harness) {
    let r = h.get(A, "/api/v1/products?q=%FF%FE").await;
    r.assert_error(422, "validation_failed");
    assert_eq!(
        r.json()["error"]["fields"]["q"],
        json!([crate::render::messages::INVALID_ENCODING])
    );
    let literal = h.get(A, "/api/v1/products?q=%ZZ").await;
    assert_eq!(literal.status, 200);
    let before = h.order_count().await;
    let body = h.order_body(1, "10");
    let post = |body: Bytes, headers: &'static [(&'static str, &'static str)]| {
        h.request(Method::POST, Some(A), "/api/v1/orders", body, headers)
    };
    let twice = &[
        ("idempotency-key", "order-1"),
        ("idempotency-key", "order-2"),
    ];
    let r = post(body.to_string().into(), twice).await;
    r.assert_error(422, "validation_failed");
    assert_eq!(
        r.json()["error"]["fields"]["Idempotency-Key"],
        json!([crate::render::messages::IDEMPOTENCY_KEY_REPEATED])
    );
    assert_eq!(h.order_count().await, before, "nothing written");
    let mut request = build_request(Method::GET, None, "/api/v1/me", Bytes::new(), &[]);
    request.headers_mut().insert(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_bytes(b"Bearer \xff\xfe").expect("a header value"),
    );
    h.send(request).await.assert_error(401, "unauthenticated");
    // The declared content type is not checked: the body is JSON or a 422.
    let r = post(body.to_string().into(), &[("content-type", "text/plain")]).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let gzip = Bytes::from_static(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
    let r = post(gzip, &[("content-encoding", "gzip")]).await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["body".to_owned()]);
    // A repeated member: the last one counts (here the valid name after a refused one).
    let text = body.to_string().replacen(
        "\"full_name\":",
        "\"full_name\": \"\\u0000\", \"full_name\":",
        1,
    );
    let r = post(text.into(), &[]).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["data"]["customer"]["name"], body["full_name"]);
    for (field, value) in [
        ("full_name", "سارة\u{7}"),
        ("full_name", "\u{1b}[31mسارة"),
        ("store_link", "http:///nohost"),
        ("store_link", "https://shop.example/\n<script>"),
    ] {
        let mut bad = body.clone();
        bad[field] = json!(value);
        let r = h.post(A, "/api/v1/orders", &bad).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec![field.to_owned()], "{value:?}");
    }
}
