//! Settings written for people: an `f32` as the `f64` of its shortest
//! decimal, so reports and config files say 0.9 rather than
//! 0.8999999761581421 (what a plain widening gives).

/// `x` as the `f64` of its shortest decimal representation.
pub fn decimal(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(x as f64)
}

/// Serde `serialize_with` for `f32` settings.
pub fn shortest<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(decimal(*x))
}

#[cfg(test)]
mod tests {
    #[test]
    fn shortest_decimal_not_the_widened_binary_value() {
        assert_eq!(super::decimal(0.9), 0.9);
        assert_ne!(0.9f32 as f64, 0.9);
        assert_eq!(super::decimal(1.0125), 1.0125);
    }
}
