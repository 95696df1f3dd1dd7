//! Balls-into-bins models (being written).
