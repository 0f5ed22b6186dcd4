//! Compression levels, where the level of a call comes from, and the auto schedule.

use serde::{Deserialize, Serialize};

/// How hard an answer is compressed. Ordered: a higher level keeps less.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The answer as assembled.
    Off,
    /// Every result kept; heavy detail (source, diagnostics, provenance) dropped.
    Summary,
    /// Shorter: neighbour lists capped, related results reduced to their head lines.
    Aggressive,
    /// One line per result, neighbours as counts.
    Minimal,
}

impl Level {
    pub const ALL: [Level; 4] = [
        Level::Off,
        Level::Summary,
        Level::Aggressive,
        Level::Minimal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::Summary => "summary",
            Level::Aggressive => "aggressive",
            Level::Minimal => "minimal",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A configured or requested level: a fixed one, or `auto` (raised as the session's
/// token budget fills, [`auto_level`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LevelSetting {
    Off,
    /// The default: every answer shaped, nothing an agent needs to continue dropped.
    #[default]
    Summary,
    Aggressive,
    Minimal,
    Auto,
}

impl LevelSetting {
    /// The names a setting is written with (configuration, environment, arguments).
    pub const NAMES: [&'static str; 5] = ["off", "summary", "aggressive", "minimal", "auto"];

    pub fn parse(text: &str) -> Option<LevelSetting> {
        Some(match text {
            "off" => LevelSetting::Off,
            "summary" => LevelSetting::Summary,
            "aggressive" => LevelSetting::Aggressive,
            "minimal" => LevelSetting::Minimal,
            "auto" => LevelSetting::Auto,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LevelSetting::Off => "off",
            LevelSetting::Summary => "summary",
            LevelSetting::Aggressive => "aggressive",
            LevelSetting::Minimal => "minimal",
            LevelSetting::Auto => "auto",
        }
    }

    /// The level for a session that has `remaining` (0.0-1.0) of its token budget left.
    pub fn resolve(self, remaining: f64) -> Level {
        match self {
            LevelSetting::Off => Level::Off,
            LevelSetting::Summary => Level::Summary,
            LevelSetting::Aggressive => Level::Aggressive,
            LevelSetting::Minimal => Level::Minimal,
            LevelSetting::Auto => auto_level(remaining),
        }
    }
}

/// Where a call's level came from (reported by `get_compression_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LevelSource {
    /// The gateway's configuration file (or its default).
    Config,
    /// The environment (`CODECTX_COMPRESSION_LEVEL` or the gateway's config variable).
    Environment,
    /// The call's `compression` argument.
    Argument,
}

impl LevelSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LevelSource::Config => "config",
            LevelSource::Environment => "environment",
            LevelSource::Argument => "argument",
        }
    }
}

/// The auto schedule (Infigraph's): above 70% of the budget remaining, answers travel
/// raw; 50-70% summary; 20-50% aggressive; below 20% minimal.
pub fn auto_level(remaining: f64) -> Level {
    if remaining > 0.70 {
        Level::Off
    } else if remaining >= 0.50 {
        Level::Summary
    } else if remaining >= 0.20 {
        Level::Aggressive
    } else {
        Level::Minimal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_raises_the_level_as_the_budget_fills() {
        assert_eq!(auto_level(1.0), Level::Off);
        assert_eq!(auto_level(0.71), Level::Off);
        assert_eq!(auto_level(0.70), Level::Summary);
        assert_eq!(auto_level(0.50), Level::Summary);
        assert_eq!(auto_level(0.49), Level::Aggressive);
        assert_eq!(auto_level(0.20), Level::Aggressive);
        assert_eq!(auto_level(0.19), Level::Minimal);
        assert_eq!(auto_level(-0.5), Level::Minimal);
    }

    #[test]
    fn settings_round_trip_by_name() {
        for name in LevelSetting::NAMES {
            assert_eq!(
                LevelSetting::parse(name).map(LevelSetting::as_str),
                Some(name)
            );
        }
        assert_eq!(LevelSetting::parse("Summary"), None);
        assert!(Level::Off < Level::Summary && Level::Aggressive < Level::Minimal);
    }
}
