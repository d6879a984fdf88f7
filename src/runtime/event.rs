//! Events: markers recorded into streams, with completion signals and timestamps.
