//! Framework-neutral engine of the marketer and supplier commerce API.
#![doc = ""]

pub mod clock;
pub mod model;
pub mod money;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
