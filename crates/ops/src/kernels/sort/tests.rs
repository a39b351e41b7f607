//! placeholder

use super::super::testing::*;
use super::*;
