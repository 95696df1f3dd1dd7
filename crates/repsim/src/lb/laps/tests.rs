//! Rules of the LAPS path chooser.
use super::*;
