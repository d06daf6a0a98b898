//! The palette generator: an adapter's `palette` (OKLCH hues, a chroma
//! factor, a lightness offset) turned into the key's colours, with every
//! adjustment reported as a warning. The rules and the constants are
//! documented in `docs/keypad-hub.md` ("Palette").

use palette::convert::FromColorUnclamped;
use palette::{IsWithinBounds, Oklab, Oklch, Srgb};

/// Orbit's own states use hues 345.9°–75.9° (reds, oranges, ambers): an
/// adapter's base hue inside the arc moves to the nearer edge.
pub(crate) const RESERVED_BASE: (f64, f64) = (345.9, 75.9);
/// An attention hue inside 18.9°–55° (the error orange) moves the same way.
pub(crate) const RESERVED_ATTENTION: (f64, f64) = (18.9, 55.0);

const WORKING_L: f32 = 0.72;
const WORKING_C: f32 = 0.15;
const ATTENTION_L: f32 = 0.70;
const ATTENTION_C: f32 = 0.17;
const DERIVED_ATTENTION_L: f32 = 0.84;
const DERIVED_ATTENTION_C: f32 = 0.19;
const DIMMED_L: f32 = 0.45;
const DIMMED_C: f32 = 0.03;
/// The keypad's background, `#101010`.
const BACKGROUND: [f32; 3] = [16.0 / 255.0, 16.0 / 255.0, 16.0 / 255.0];
/// WCAG 2.1 non-text contrast (1.4.11) of a key against the background.
const MIN_KEY_CONTRAST: f32 = 3.0;
/// WCAG 2.1 AA text contrast (1.4.3) of the key's text on its colour.
const MIN_TEXT_CONTRAST: f32 = 4.5;
/// The smallest Oklab distance between working and attention colours.
const MIN_SALIENCE: f32 = 0.08;

/// The palette an adapter asked for (validated ranges).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PaletteRequest {
    pub(crate) base_hue: f64,
    pub(crate) chroma: Option<f64>,
    pub(crate) lightness: Option<f64>,
    pub(crate) attention_hue: Option<f64>,
}

/// The palette the hub uses, and the notes about it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResolvedPalette {
    pub(crate) base_hue: f64,
    pub(crate) chroma: f64,
    pub(crate) lightness: f64,
    pub(crate) attention_hue: f64,
    pub(crate) attention_derived: bool,
    pub(crate) working: String,
    pub(crate) attention: String,
    pub(crate) dimmed: String,
    pub(crate) text: String,
}

impl ResolvedPalette {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "baseHue": round(self.base_hue),
            "chroma": self.chroma,
            "lightness": self.lightness,
            "attentionHue": round(self.attention_hue),
            "attentionDerived": self.attention_derived,
            "colors": {
                "working": self.working,
                "attention": self.attention,
                "dimmed": self.dimmed,
                "text": self.text,
            }
        })
    }
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Whether `hue` lies strictly inside the arc `from`..`to` (clockwise,
/// wrapping through 0°).
fn in_arc(hue: f64, (from, to): (f64, f64)) -> bool {
    if from <= to {
        hue > from && hue < to
    } else {
        hue > from || hue < to
    }
}

/// Circular distance between two hues.
fn hue_distance(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// `hue` moved to the nearer edge of `arc` when it lies inside.
pub(crate) fn out_of_arc(hue: f64, arc: (f64, f64)) -> Option<f64> {
    if !in_arc(hue, arc) {
        return None;
    }
    if hue_distance(hue, arc.0) <= hue_distance(hue, arc.1) {
        Some(arc.0)
    } else {
        Some(arc.1)
    }
}

fn hue_family(hue: f64) -> Option<&'static str> {
    match hue {
        h if (100.0..165.0).contains(&h) => Some("green"),
        h if (165.0..225.0).contains(&h) => Some("cyan"),
        h if (225.0..285.0).contains(&h) => Some("blue"),
        _ => None,
    }
}

fn srgb(l: f32, c: f32, h: f64) -> Srgb<f32> {
    Srgb::from_color_unclamped(Oklch::new(l, c, h as f32))
}

fn hex(color: Srgb<f32>) -> String {
    let [r, g, b] = [color.red, color.green, color.blue].map(|v| {
        #[expect(clippy::cast_sign_loss, reason = "clamped to 0..=255 first")]
        let byte = (v.clamp(0.0, 1.0) * 255.0).round() as u8;
        byte
    });
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn luminance(rgb: [f32; 3]) -> f32 {
    let lin = |v: f32| {
        if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2])
}

fn contrast(a: [f32; 3], b: [f32; 3]) -> f32 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

fn rgb(color: Srgb<f32>) -> [f32; 3] {
    [color.red, color.green, color.blue].map(|v| v.clamp(0.0, 1.0))
}

/// One colour: fitted into sRGB (chroma reduced) and lifted to 3:1 against
/// the background, with notes.
fn fit(name: &str, l: f32, c: f32, h: f64, warnings: &mut Vec<String>) -> (f32, f32) {
    let mut c_fit = c;
    if !srgb(l, c, h).is_within_bounds() {
        let (mut lo, mut hi) = (0.0_f32, c);
        for _ in 0..20 {
            let mid = f32::midpoint(lo, hi);
            if srgb(l, mid, h).is_within_bounds() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        c_fit = lo;
        warnings.push(format!(
            "gamut: {name} chroma {c:.3} reduced to {c_fit:.3} to fit sRGB"
        ));
    }
    let mut l_fit = l;
    while contrast(rgb(srgb(l_fit, c_fit, h)), BACKGROUND) < MIN_KEY_CONTRAST && l_fit < 0.99 {
        l_fit += 0.01;
    }
    if l_fit > l {
        warnings.push(format!(
            "contrast: {name} lightness lifted from {l:.2} to {l_fit:.2} for {MIN_KEY_CONTRAST}:1 against the keypad background"
        ));
    }
    (l_fit, c_fit)
}

/// Resolves a palette; `user_base_hue` is the user's override from Settings.
pub(crate) fn resolve(
    request: &PaletteRequest,
    user_base_hue: Option<f64>,
    warnings: &mut Vec<String>,
) -> ResolvedPalette {
    resolve_with(request, user_base_hue, warnings, true)
}

/// A built-in adapter's palette: the reserved arcs are Orbit's own, so
/// nothing is moved out of them (gamut, contrast and salience still apply).
pub(crate) fn resolve_builtin(
    request: &PaletteRequest,
    user_base_hue: Option<f64>,
) -> ResolvedPalette {
    resolve_with(request, user_base_hue, &mut Vec::new(), false)
}

fn resolve_with(
    request: &PaletteRequest,
    user_base_hue: Option<f64>,
    warnings: &mut Vec<String>,
    reserved_arcs: bool,
) -> ResolvedPalette {
    let mut base = user_base_hue.unwrap_or(request.base_hue);
    if let Some(user) = user_base_hue {
        warnings.push(format!(
            "baseHue: the user set {user:.1} in Settings; it is used instead of {:.1}",
            request.base_hue
        ));
    }
    if let Some(moved) = out_of_arc(base, RESERVED_BASE).filter(|_| reserved_arcs) {
        warnings.push(format!(
            "baseHue: {base} lies in the reserved arc 345.9°–75.9°; moved to {moved}"
        ));
        base = moved;
    }
    let chroma = request.chroma.unwrap_or(1.0);
    let lightness = request.lightness.unwrap_or(0.0);
    #[expect(clippy::single_match_else, reason = "two cases read better as a match")]
    let (attention_hue, derived) = match request.attention_hue {
        Some(hue) => match out_of_arc(hue, RESERVED_ATTENTION).filter(|_| reserved_arcs) {
            Some(moved) => {
                warnings.push(format!(
                    "attentionHue: {hue} lies in the reserved arc 18.9°–55°; moved to {moved}"
                ));
                (moved, false)
            }
            None => (hue, false),
        },
        None => {
            if let Some(family) = hue_family(base) {
                warnings.push(format!(
                    "attention: waiting is derived from baseHue {base:.1} ({family}), which does not read as an alarm; set attentionHue"
                ));
            }
            (base, true)
        }
    };
    let (chroma32, light32) = (chroma as f32, lightness as f32);
    let (wl, wc) = fit(
        "working",
        WORKING_L + light32,
        WORKING_C * chroma32,
        base,
        warnings,
    );
    let (mut al, mut ac) = if derived {
        (
            DERIVED_ATTENTION_L + light32,
            DERIVED_ATTENTION_C * chroma32,
        )
    } else {
        (ATTENTION_L + light32, ATTENTION_C * chroma32)
    };
    (al, ac) = fit("attention", al, ac, attention_hue, warnings);
    // The salience guard: waiting must stand out from working.
    let oklab = |l: f32, c: f32, h: f64| Oklab::from_color_unclamped(Oklch::new(l, c, h as f32));
    let distance = |a: Oklab, b: Oklab| {
        ((a.l - b.l).powi(2) + (a.a - b.a).powi(2) + (a.b - b.b).powi(2)).sqrt()
    };
    let working_lab = oklab(wl, wc, base);
    let before = al;
    while distance(working_lab, oklab(al, ac, attention_hue)) < MIN_SALIENCE && al < 0.95 {
        al += 0.02;
        if !srgb(al, ac, attention_hue).is_within_bounds() {
            (al, ac) = fit("attention", al, ac, attention_hue, &mut Vec::new());
        }
    }
    if al > before {
        warnings.push(format!(
            "salience: attention lightness raised from {before:.2} to {al:.2} so waiting stands out from working"
        ));
    }
    let working = srgb(wl, wc, base);
    let black = [0.0, 0.0, 0.0];
    let white = [1.0, 1.0, 1.0];
    let (text, text_contrast) = {
        let on_black = contrast(rgb(working), black);
        let on_white = contrast(rgb(working), white);
        if on_black >= on_white {
            ("#000000", on_black)
        } else {
            ("#ffffff", on_white)
        }
    };
    if text_contrast < MIN_TEXT_CONTRAST {
        warnings.push(format!(
            "contrast: text on the working colour reaches {text_contrast:.1}:1, under {MIN_TEXT_CONTRAST}:1"
        ));
    }
    ResolvedPalette {
        base_hue: base,
        chroma,
        lightness,
        attention_hue,
        attention_derived: derived,
        working: hex(working),
        attention: hex(srgb(al, ac, attention_hue)),
        dimmed: hex(srgb(DIMMED_L + light32, DIMMED_C, base)),
        text: text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(base: f64, attention: Option<f64>) -> PaletteRequest {
        PaletteRequest {
            base_hue: base,
            chroma: None,
            lightness: None,
            attention_hue: attention,
        }
    }

    #[test]
    fn reserved_arcs_move_to_the_nearer_edge() {
        assert_eq!(out_of_arc(350.0, RESERVED_BASE), Some(345.9));
        assert_eq!(out_of_arc(70.0, RESERVED_BASE), Some(75.9));
        assert_eq!(out_of_arc(10.0, RESERVED_BASE), Some(345.9));
        assert_eq!(out_of_arc(40.0, RESERVED_BASE), Some(75.9));
        assert_eq!(out_of_arc(75.9, RESERVED_BASE), None);
        assert_eq!(out_of_arc(150.0, RESERVED_BASE), None);
        assert_eq!(out_of_arc(20.0, RESERVED_ATTENTION), Some(18.9));
        assert_eq!(out_of_arc(50.0, RESERVED_ATTENTION), Some(55.0));
    }

    #[test]
    fn green_without_attention_warns_and_colours_are_hex() {
        let mut warnings = Vec::new();
        let p = resolve(&request(150.0, None), None, &mut warnings);
        assert!(
            warnings.iter().any(|w| w.starts_with("attention:")),
            "{warnings:?}"
        );
        assert!(p.attention_derived);
        assert_eq!(p.working.len(), 7);
        let mut warnings = Vec::new();
        let p = resolve(&request(150.0, Some(330.0)), None, &mut warnings);
        assert!(
            !warnings.iter().any(|w| w.starts_with("attention:")),
            "{warnings:?}"
        );
        assert_ne!(p.working, p.attention);
    }

    #[test]
    fn high_chroma_is_clipped_into_gamut() {
        let mut warnings = Vec::new();
        let p = PaletteRequest {
            base_hue: 200.0,
            chroma: Some(1.3),
            lightness: Some(0.05),
            attention_hue: Some(330.0),
        };
        resolve(&p, None, &mut warnings);
        assert!(
            warnings.iter().any(|w| w.starts_with("gamut:")),
            "{warnings:?}"
        );
    }
}
