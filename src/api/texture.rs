//! Texture and surface objects (`runtime/image/texture.rs`).
//!
//! ROCm 5.2 declares the surface calls C++ only, so programs import them by their mangled
//! names; those are the names exported here.

use super::convert::Out;
use super::declare::hip_api;
use super::types::{
    hipError_t, DrvResourceDesc, DrvResourceViewDesc, DrvTextureDesc, ResourceDesc,
    ResourceViewDesc, TextureDesc,
};
use crate::runtime::{self, image::texture};
use std::ffi::c_void;

hip_api! {
    fn hipCreateTextureObject(
        texture: *mut *mut c_void => Out<*mut c_void>,
        resource: *const ResourceDesc => &ResourceDesc,
        desc: *const TextureDesc => &TextureDesc,
        view: *const ResourceViewDesc,
    ) -> hipError_t {
        // SAFETY: null or a readable descriptor, per HIP's contract.
        let view = unsafe { view.as_ref() };
        texture.write(texture::create_texture(runtime::devices()?, resource, desc, view)?)
    }

    fn hipDestroyTextureObject(texture: *mut c_void) -> hipError_t {
        texture::destroy(runtime::devices()?, texture, true)
    }
    alias hipTexObjectDestroy = hipDestroyTextureObject;

    fn hipGetTextureObjectResourceDesc(
        resource: *mut ResourceDesc => Out<ResourceDesc>,
        texture: *mut c_void,
    ) -> hipError_t {
        resource.write(texture::texture_resource(runtime::current_device()?, texture)?)
    }

    fn hipGetTextureObjectTextureDesc(
        desc: *mut TextureDesc => Out<TextureDesc>,
        texture: *mut c_void,
    ) -> hipError_t {
        desc.write(texture::texture_desc(runtime::current_device()?, texture)?)
    }

    fn hipGetTextureObjectResourceViewDesc(
        view: *mut ResourceViewDesc => Out<ResourceViewDesc>,
        texture: *mut c_void,
    ) -> hipError_t {
        view.write(texture::texture_view(runtime::current_device()?, texture)?)
    }

    // ---- the driver API's forms ----------------------------------------------------------

    fn hipTexObjectCreate(
        texture: *mut *mut c_void => Out<*mut c_void>,
        resource: *const DrvResourceDesc => &DrvResourceDesc,
        desc: *const DrvTextureDesc => &DrvTextureDesc,
        view: *const DrvResourceViewDesc,
    ) -> hipError_t {
        // SAFETY: null or a readable descriptor, per HIP's contract.
        let view = unsafe { view.as_ref() }.map(|v| v.view);
        let resource = ResourceDesc::from_driver(resource)?;
        let desc = TextureDesc::from_driver(desc);
        texture.write(texture::create_texture(runtime::devices()?, &resource, &desc, view.as_ref())?)
    }

    fn hipTexObjectGetResourceDesc(
        resource: *mut DrvResourceDesc => Out<DrvResourceDesc>,
        texture: *mut c_void,
    ) -> hipError_t {
        resource.write(texture::texture_resource(runtime::current_device()?, texture)?.to_driver())
    }

    fn hipTexObjectGetTextureDesc(
        desc: *mut DrvTextureDesc => Out<DrvTextureDesc>,
        texture: *mut c_void,
    ) -> hipError_t {
        desc.write(texture::texture_desc(runtime::current_device()?, texture)?.to_driver())
    }

    fn hipTexObjectGetResourceViewDesc(
        view: *mut DrvResourceViewDesc => Out<DrvResourceViewDesc>,
        texture: *mut c_void,
    ) -> hipError_t {
        view.write(DrvResourceViewDesc::from_view(texture::texture_view(runtime::current_device()?, texture)?))
    }

    // ---- surfaces (ROCm 5.2's C++ names) -------------------------------------------------

    /// `hipCreateSurfaceObject(hipSurfaceObject_t*, const hipResourceDesc*)`.
    fn _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(
        surface: *mut *mut c_void => Out<*mut c_void>,
        resource: *const ResourceDesc => &ResourceDesc,
    ) -> hipError_t {
        surface.write(texture::create_surface(runtime::devices()?, resource)?)
    }

    /// `hipDestroySurfaceObject(hipSurfaceObject_t)`.
    fn _Z23hipDestroySurfaceObjectP13__hip_surface(surface: *mut c_void) -> hipError_t {
        texture::destroy(runtime::devices()?, surface, false)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_texture.rs"));
