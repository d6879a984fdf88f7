//! The devices: a HIP device over one GPU agent (`device`), what it reports
//! (`device_props`), the one current on each thread (`current`), the contexts that name
//! them (`context`) and each device's hostcall service for device-side `printf` and
//! `assert` (`hostcall`). Built on the ordering engine (each device holds its streams'
//! `DeviceStreams`); memory and everything above take a `&Device` handed down.

pub mod context;
pub mod current;
pub mod device;
pub mod device_props;
pub mod hostcall;
