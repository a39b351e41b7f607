//! Tests of `typed`.

use super::*;

#[test]
fn binding_words_round_trip_and_refuse_a_second_key() {
    let key = BindingKey {
        imported: true,
        location: Location::HostNuma,
        id: 5,
    }
    .pack()
    .unwrap();
    assert_eq!(key & BindingKey::PRESENT, BindingKey::PRESENT);
    let one = Binding::EMPTY.bind(key).unwrap();
    let two = one.bind(key).unwrap();
    assert_eq!(Binding::unpack(two.pack()), two);
    assert_eq!(two.mappings, 2);
    let other = BindingKey {
        imported: false,
        location: Location::HostNuma,
        id: 5,
    }
    .pack()
    .unwrap();
    assert_eq!(two.bind(other), None);
    assert_eq!(two.unbind().unbind(), Binding::EMPTY);
    assert_eq!(Binding::EMPTY.bind(other).unwrap().key, other);
    let too_big = BindingKey {
        imported: false,
        location: Location::Device,
        id: 1 << 27,
    };
    assert_eq!(too_big.pack(), Err(AclError::INVALID_PARAM));
}

#[test]
fn every_location_packs_to_a_distinct_key() {
    let keys: [u32; 3] = Location::ALL.map(|location| {
        BindingKey {
            imported: false,
            location,
            id: 0,
        }
        .pack()
        .unwrap()
    });
    assert!(keys[0] != keys[1] && keys[1] != keys[2] && keys[0] != keys[2]);
}
