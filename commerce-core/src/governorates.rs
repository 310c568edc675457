//! The 27 governorates of Egypt, as data: what a platform seeds its shipping table with
//! ([`Operator::create_governorate`](crate::operator::Operator::create_governorate), then
//! [`Operator::set_shipping_rate`](crate::operator::Operator::set_shipping_rate) per option).

/// A governorate's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GovernorateName {
    /// The English name (`Cairo`).
    pub english: &'static str,
    /// The Arabic name, as the API shows it (`القاهرة`).
    pub arabic: &'static str,
}

impl GovernorateName {
    /// A `GovernorateName` of its fields, in their order.
    pub fn new(english: &'static str, arabic: &'static str) -> Self {
        Self { english, arabic }
    }
}

/// The 27 governorates of Egypt.
pub const EGYPT: [GovernorateName; 27] = [
    GovernorateName {
        english: "Cairo",
        arabic: "القاهرة",
    },
    GovernorateName {
        english: "Giza",
        arabic: "الجيزة",
    },
    GovernorateName {
        english: "Alexandria",
        arabic: "الإسكندرية",
    },
    GovernorateName {
        english: "Qalyubia",
        arabic: "القليوبية",
    },
    GovernorateName {
        english: "Dakahlia",
        arabic: "الدقهلية",
    },
    GovernorateName {
        english: "Sharqia",
        arabic: "الشرقية",
    },
    GovernorateName {
        english: "Gharbia",
        arabic: "الغربية",
    },
    GovernorateName {
        english: "Monufia",
        arabic: "المنوفية",
    },
    GovernorateName {
        english: "Beheira",
        arabic: "البحيرة",
    },
    GovernorateName {
        english: "Kafr El Sheikh",
        arabic: "كفر الشيخ",
    },
    GovernorateName {
        english: "Damietta",
        arabic: "دمياط",
    },
    GovernorateName {
        english: "Port Said",
        arabic: "بورسعيد",
    },
    GovernorateName {
        english: "Ismailia",
        arabic: "الإسماعيلية",
    },
    GovernorateName {
        english: "Suez",
        arabic: "السويس",
    },
    GovernorateName {
        english: "Faiyum",
        arabic: "الفيوم",
    },
    GovernorateName {
        english: "Beni Suef",
        arabic: "بني سويف",
    },
    GovernorateName {
        english: "Minya",
        arabic: "المنيا",
    },
    GovernorateName {
        english: "Asyut",
        arabic: "أسيوط",
    },
    GovernorateName {
        english: "Sohag",
        arabic: "سوهاج",
    },
    GovernorateName {
        english: "Qena",
        arabic: "قنا",
    },
    GovernorateName {
        english: "Luxor",
        arabic: "الأقصر",
    },
    GovernorateName {
        english: "Aswan",
        arabic: "أسوان",
    },
    GovernorateName {
        english: "Red Sea",
        arabic: "البحر الأحمر",
    },
    GovernorateName {
        english: "New Valley",
        arabic: "الوادي الجديد",
    },
    GovernorateName {
        english: "Matrouh",
        arabic: "مطروح",
    },
    GovernorateName {
        english: "North Sinai",
        arabic: "شمال سيناء",
    },
    GovernorateName {
        english: "South Sinai",
        arabic: "جنوب سيناء",
    },
];

/// The governorate with this English name (exact), if any.
pub fn by_english_name(english: &str) -> Option<GovernorateName> {
    EGYPT.iter().copied().find(|g| g.english == english)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_name_is_distinct_and_found() {
        let english: HashSet<_> = EGYPT.iter().map(|g| g.english).collect();
        let arabic: HashSet<_> = EGYPT.iter().map(|g| g.arabic).collect();
        assert_eq!((english.len(), arabic.len()), (27, 27));
        assert_eq!(by_english_name("Cairo").map(|g| g.arabic), Some("القاهرة"));
        assert_eq!(by_english_name("cairo"), None);
    }
}
