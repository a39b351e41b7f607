// Asking for the verdict of a refused combination is itself an error.
use aclmem_core::{AtlasA2, Host, Huge1G, Supports};

fn main() {
    let _v = <AtlasA2 as Supports<Host, Huge1G>>::VERDICT;
}
