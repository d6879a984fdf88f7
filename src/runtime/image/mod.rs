//! Arrays and what reads them as images: `hipArray` and mipmapped arrays (`array`), the 3D
//! copies between arrays and pitched memory (`copy3d`), texture and surface objects
//! (`texture`) and the texture references made of those (`texref`). Built on memory and the
//! copy path; graphs build on it (3D copy nodes).

pub mod array;
pub mod copy3d;
pub mod texture;
