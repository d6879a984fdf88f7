//! Texture and surface objects (`runtime/image/texture.rs`), and texture references
//! (`runtime/ops/texref.rs`: ROCm 5 and 6; under the ROCm 7 ABI every reference call
//! answers hipErrorNotSupported, as AMD's ROCm 7 library has none of them).
//!
//! ROCm 5.2 declares the surface calls C++ only, so programs import them by their mangled
//! names; those are the names exported here.

use super::convert::Out;
use super::declare::hip_api;
use super::types::{
    hipError_t, hipModule_t, ArrayDescriptor, ChannelFormatDesc, DrvResourceDesc,
    DrvResourceViewDesc, DrvTextureDesc, HipArray, HipMipmappedArray, ResourceDesc,
    ResourceViewDesc, TextureDesc, TextureReference,
};
use crate::error::HipError;
use crate::runtime::devices::device_props::MAX_LINEAR_ELEMENTS;
use crate::runtime::image::texture::resource_type;
use crate::runtime::kernel::module::{self, Module};
use crate::runtime::{self, image::texture, ops::texref};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

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

    // ---- texture references (ROCm 5 and 6) ----------------------------------------------

    /// `__hipRegisterTexture`: clang registers each `texture<>` global with the address of
    /// its host copy and its device-side name; the type, normalization and `extern` flags
    /// are what the host copy already says.
    fn __hipRegisterTexture(
        modules: *mut *mut c_void,
        var: *mut c_void,
        _host_var: *mut c_char,
        device_var: *mut c_char,
        _type: i32,
        _norm: i32,
        _ext: i32,
    ) -> () as void {
        let Ok(fat_binary) = module::fat_binary(modules) else {
            eprintln!("hipshim: __hipRegisterTexture with an unknown fat binary handle");
            return;
        };
        if var.is_null() || device_var.is_null() {
            eprintln!("hipshim: __hipRegisterTexture with a null variable");
            return;
        }
        // SAFETY: clang passes the variable's NUL-terminated device-side name.
        let name = unsafe { CStr::from_ptr(device_var) }.to_string_lossy().into_owned();
        texref::register(fat_binary, var as usize, name);
    }

    fn hipBindTexture(
        offset: *mut usize,
        texref: *const TextureReference,
        ptr: *const c_void,
        desc: *const ChannelFormatDesc,
        size: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract: null or writable, null or readable.
        let (offset, desc) = unsafe { (offset.as_mut(), desc.as_ref()) };
        texref::bind_texture(runtime::devices()?, offset, texref, ptr, desc, size)
    }

    fn hipBindTexture2D(
        offset: *mut usize,
        texref: *const TextureReference,
        ptr: *const c_void,
        desc: *const ChannelFormatDesc,
        width: usize,
        height: usize,
        pitch: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract: null or writable, null or readable.
        let (offset, desc) = unsafe { (offset.as_mut(), desc.as_ref()) };
        texref::bind_texture_2d(runtime::devices()?, offset, texref, ptr, desc, width, height, pitch)
    }

    fn hipBindTextureToArray(
        texref: *const TextureReference,
        array: *const HipArray,
        desc: *const ChannelFormatDesc,
    ) -> hipError_t {
        // SAFETY: null or a readable descriptor, per HIP's contract.
        let desc = unsafe { desc.as_ref() };
        texref::bind_array(runtime::devices()?, texref, array, Some(desc), None)
    }

    fn hipBindTextureToMipmappedArray(
        texref: *const TextureReference,
        mipmap: *const HipMipmappedArray,
        desc: *const ChannelFormatDesc,
    ) -> hipError_t {
        // SAFETY: null or a readable descriptor, per HIP's contract.
        let desc = unsafe { desc.as_ref() };
        texref::bind_mipmapped_array(runtime::devices()?, texref, mipmap, Some(desc), None)
    }

    fn hipUnbindTexture(texref: *const TextureReference) -> hipError_t {
        texref::unbind(runtime::devices()?, texref)
    }

    /// The offset the last bind reported (0 unless a pitch2D bind took an unaligned pointer).
    fn hipGetTextureAlignmentOffset(offset: *mut usize => Out<usize>, texref: *const TextureReference) -> hipError_t {
        offset.write(texref::alignment_offset(runtime::current_device()?, texref)?)
    }

    /// A texture reference is its own symbol: the address of a registered `texture<>` global
    /// (or of a copy from hipModuleGetTexRef) comes back as it is; anything else is
    /// hipErrorInvalidSymbol.
    fn hipGetTextureReference(
        texref: *mut *const TextureReference => Out<*const TextureReference>,
        symbol: *const c_void,
    ) -> hipError_t {
        texref::require_references(runtime::current_device()?, "hipGetTextureReference")?;
        if !texref::is_reference(symbol) {
            tracing::warn!(symbol = format_args!("{symbol:p}"), "hipGetTextureReference: not a texture reference");
            return Err(HipError::INVALID_SYMBOL);
        }
        texref.write(symbol as *const TextureReference)
    }

    fn hipModuleGetTexRef(
        texref: *mut *mut TextureReference => Out<*mut TextureReference>,
        module: hipModule_t => Arc<Module>,
        name: *const c_char => &str,
    ) -> hipError_t {
        texref.write(texref::module_reference(runtime::current_device()?, &module, name)?)
    }

    /// AMD's formula: the device's `maxTexture1DLinear` over the element's bytes.
    fn hipDeviceGetTexture1DLinearMaxWidth(
        width: *mut usize => Out<usize>,
        desc: *const ChannelFormatDesc => &ChannelFormatDesc,
        ordinal: i32,
    ) -> hipError_t {
        let devices = runtime::devices()?;
        let device = usize::try_from(ordinal)
            .ok()
            .and_then(|o| devices.get(o))
            .ok_or(HipError::INVALID_DEVICE)?;
        let bits = [desc.x, desc.y, desc.z, desc.w].iter().map(|&b| b.max(0) as usize).sum::<usize>();
        let bytes = bits / 8;
        if bytes == 0 {
            tracing::warn!(?desc, "hipDeviceGetTexture1DLinearMaxWidth: an element of no bytes");
            return Err(HipError::INVALID_VALUE);
        }
        // hipDeviceAttributeMaxTexture1DLinear: elements, and 0 without image instructions.
        let linear = if device.info.image_support { MAX_LINEAR_ELEMENTS } else { 0 };
        width.write(linear / bytes)
    }

    // ---- hipTexRefSet*: the reference's state (the bind after it uses it) ----------------

    fn hipTexRefSetAddressMode(texref: *mut TextureReference, dim: i32, mode: u32) -> hipError_t {
        let call = "hipTexRefSetAddressMode";
        let r = texref::reference(runtime::current_device()?, texref, call)?;
        let dim = texref::check_address_mode(dim, Some(mode), call)?;
        r.address_mode[dim] = mode;
        Ok(())
    }

    fn hipTexRefSetFilterMode(texref: *mut TextureReference, mode: u32) -> hipError_t {
        let call = "hipTexRefSetFilterMode";
        let r = texref::reference(runtime::current_device()?, texref, call)?;
        r.filter_mode = texref::check_filter_mode(mode, call)?;
        Ok(())
    }

    fn hipTexRefSetMipmapFilterMode(texref: *mut TextureReference, mode: u32) -> hipError_t {
        let call = "hipTexRefSetMipmapFilterMode";
        let r = texref::reference(runtime::current_device()?, texref, call)?;
        r.mipmap_filter_mode = texref::check_filter_mode(mode, call)?;
        Ok(())
    }

    fn hipTexRefSetFlags(texref: *mut TextureReference, flags: u32) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefSetFlags")?;
        texref::set_flags(r, flags)
    }

    fn hipTexRefSetFormat(texref: *mut TextureReference, format: u32, channels: i32) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefSetFormat")?;
        texref::set_format(r, format, channels)
    }

    fn hipTexRefSetMaxAnisotropy(texref: *mut TextureReference, max: u32) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefSetMaxAnisotropy")?;
        r.max_anisotropy = max;
        Ok(())
    }

    fn hipTexRefSetMipmapLevelBias(texref: *mut TextureReference, bias: f32) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefSetMipmapLevelBias")?;
        r.mipmap_level_bias = bias;
        Ok(())
    }

    fn hipTexRefSetMipmapLevelClamp(texref: *mut TextureReference, min: f32, max: f32) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefSetMipmapLevelClamp")?;
        (r.min_mipmap_level_clamp, r.max_mipmap_level_clamp) = (min, max);
        Ok(())
    }

    /// hipshim keeps the colour beside the reference (`textureReference` has no field for
    /// it); the next bind uses it.
    fn hipTexRefSetBorderColor(texref: *mut TextureReference, colour: *mut f32) -> hipError_t {
        let device = runtime::current_device()?;
        texref::reference(device, texref, "hipTexRefSetBorderColor")?;
        if colour.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: HIP's contract: four readable floats.
        let colour = unsafe { *(colour as *const [f32; 4]) };
        texref::set_border_color(device, texref, colour)
    }

    // ---- hipTexRefSet* that bind ---------------------------------------------------------

    fn hipTexRefSetAddress(offset: *mut usize, texref: *mut TextureReference, ptr: *mut c_void, bytes: usize) -> hipError_t {
        // SAFETY: null or writable, per HIP's contract.
        let offset = unsafe { offset.as_mut() };
        texref::set_address(runtime::devices()?, offset, texref, ptr, bytes)
    }

    fn hipTexRefSetAddress2D(
        texref: *mut TextureReference,
        desc: *const ArrayDescriptor,
        ptr: *mut c_void,
        pitch: usize,
    ) -> hipError_t {
        // SAFETY: null or readable, per HIP's contract.
        let desc = unsafe { desc.as_ref() }.map(|d| (d.width, d.height, d.format, d.num_channels));
        texref::set_address_2d(runtime::devices()?, texref, desc, ptr, pitch)
    }

    fn hipTexRefSetArray(texref: *mut TextureReference, array: *const HipArray, flags: u32) -> hipError_t {
        texref::bind_array(runtime::devices()?, texref, array, None, Some(flags))
    }

    fn hipTexRefSetMipmappedArray(texref: *mut TextureReference, mipmap: *mut HipMipmappedArray, flags: u32) -> hipError_t {
        texref::bind_mipmapped_array(runtime::devices()?, texref, mipmap, None, Some(flags))
    }

    // ---- hipTexRefGet* -------------------------------------------------------------------

    fn hipTexRefGetAddressMode(mode: *mut u32 => Out<u32>, texref: *const TextureReference, dim: i32) -> hipError_t {
        let call = "hipTexRefGetAddressMode";
        let r = texref::reference(runtime::current_device()?, texref, call)?;
        let dim = texref::check_address_mode(dim, None, call)?;
        mode.write(r.address_mode[dim])
    }

    fn hipTexRefGetFilterMode(mode: *mut u32 => Out<u32>, texref: *const TextureReference) -> hipError_t {
        mode.write(texref::reference(runtime::current_device()?, texref, "hipTexRefGetFilterMode")?.filter_mode)
    }

    fn hipTexRefGetMipmapFilterMode(mode: *mut u32 => Out<u32>, texref: *const TextureReference) -> hipError_t {
        mode.write(texref::reference(runtime::current_device()?, texref, "hipTexRefGetMipmapFilterMode")?.mipmap_filter_mode)
    }

    fn hipTexRefGetFlags(flags: *mut u32 => Out<u32>, texref: *const TextureReference) -> hipError_t {
        flags.write(texref::flags(texref::reference(runtime::current_device()?, texref, "hipTexRefGetFlags")?))
    }

    fn hipTexRefGetFormat(format: *mut u32 => Out<u32>, channels: *mut i32 => Out<i32>, texref: *const TextureReference) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefGetFormat")?;
        format.write(r.format)?;
        channels.write(r.num_channels)
    }

    fn hipTexRefGetMaxAnisotropy(max: *mut i32 => Out<i32>, texref: *const TextureReference) -> hipError_t {
        max.write(texref::reference(runtime::current_device()?, texref, "hipTexRefGetMaxAnisotropy")?.max_anisotropy as i32)
    }

    fn hipTexRefGetMipmapLevelBias(bias: *mut f32 => Out<f32>, texref: *const TextureReference) -> hipError_t {
        bias.write(texref::reference(runtime::current_device()?, texref, "hipTexRefGetMipmapLevelBias")?.mipmap_level_bias)
    }

    fn hipTexRefGetMipmapLevelClamp(
        min: *mut f32 => Out<f32>,
        max: *mut f32 => Out<f32>,
        texref: *const TextureReference,
    ) -> hipError_t {
        let r = texref::reference(runtime::current_device()?, texref, "hipTexRefGetMipmapLevelClamp")?;
        min.write(r.min_mipmap_level_clamp)?;
        max.write(r.max_mipmap_level_clamp)
    }

    fn hipTexRefGetBorderColor(colour: *mut f32, texref: *const TextureReference) -> hipError_t {
        let value = texref::border_color(runtime::current_device()?, texref)?;
        if colour.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: HIP's contract: room for four floats.
        unsafe { *(colour as *mut [f32; 4]) = value };
        Ok(())
    }

    /// The device pointer of a linear or pitch2D binding; an array binding or none is
    /// hipErrorInvalidValue.
    fn hipTexRefGetAddress(ptr: *mut *mut c_void => Out<*mut c_void>, texref: *const TextureReference) -> hipError_t {
        let call = "hipTexRefGetAddress";
        let resource = texref::bound_resource(runtime::current_device()?, texref, call)?;
        if !matches!(resource.res_type, resource_type::LINEAR | resource_type::PITCH_2D) {
            tracing::warn!("{call}: the reference is bound to an array, not to memory");
            return Err(HipError::INVALID_VALUE);
        }
        // A pitch2D binding starts at the aligned base; the caller's pointer is that plus
        // the offset reported at the bind.
        let offset = texref::alignment_offset(runtime::current_device()?, texref)?;
        ptr.write((resource.ptr as usize + offset) as *mut c_void)
    }

    fn hipTexRefGetArray(array: *mut *mut HipArray => Out<*mut HipArray>, texref: *const TextureReference) -> hipError_t {
        let call = "hipTexRefGetArray";
        let resource = texref::bound_resource(runtime::current_device()?, texref, call)?;
        if resource.res_type != resource_type::ARRAY {
            tracing::warn!("{call}: the reference is not bound to an array");
            return Err(HipError::INVALID_VALUE);
        }
        array.write(resource.ptr as *mut HipArray)
    }

    fn hipTexRefGetMipMappedArray(
        mipmap: *mut *mut HipMipmappedArray => Out<*mut HipMipmappedArray>,
        texref: *const TextureReference,
    ) -> hipError_t {
        let call = "hipTexRefGetMipMappedArray";
        let resource = texref::bound_resource(runtime::current_device()?, texref, call)?;
        if resource.res_type != resource_type::MIPMAPPED_ARRAY {
            tracing::warn!("{call}: the reference is not bound to a mipmapped array");
            return Err(HipError::INVALID_VALUE);
        }
        mipmap.write(resource.ptr as *mut HipMipmappedArray)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_texture.rs"));
