//! Operations over several layers below: managed-memory advice, prefetch and attach
//! (`managed`) and multi-device cooperative launches (`multi_device`), which also refuse to
//! run in a stream capture (`graph::capture`), and a device's reset (`reset`: its streams and
//! its memory), and texture references (`texref`: a module's or a `texture<>` global's
//! reference bound to images and linear memory).

pub mod managed;
pub mod multi_device;
mod reset;
pub mod texref;
