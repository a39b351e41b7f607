//! Tests of `options`.

#[test]
fn version_numbers_count_as_the_runtime_does() {
    assert_eq!(super::version_num("9.0.0"), 90_000_000);
    assert_eq!(super::version_num("8.3.RC1"), 80_299_901);
    assert_eq!(super::version_num("8.5.alpha002"), 80_499_702);
    assert_eq!(super::version_num("8.1.beta1"), 80_099_801);
    assert_eq!(super::version_num("8.0.2"), 80_002_000);
}
