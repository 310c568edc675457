//! Store-level conformance cases (to be written).
