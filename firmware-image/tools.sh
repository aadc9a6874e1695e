#!/usr/bin/env bash
# The Debian packages `make image` and `make qemu-smoke` need: installed when missing (we run as root on
# a Debian machine, like `make test`), and a clear refusal naming the package when that fails.
# Usage: tools.sh amd64|arm64|smoke
set -euo pipefail

# command -> Debian package that ships it
declare -A PKG=(
  [mmdebstrap]=mmdebstrap [genimage]=genimage [mke2fs]=e2fsprogs [mcopy]=mtools [mkdosfs]=dosfstools
  [sfdisk]=fdisk [zstd]=zstd [qemu-system-x86_64]=qemu-system-x86 [qemu-img]=qemu-utils
)
need=(mmdebstrap genimage mke2fs mcopy mkdosfs sfdisk zstd)
case "${1:-amd64}" in
  amd64) ;;
  arm64) PKG[qemu-aarch64-static]=qemu-user-static PKG[update-binfmts]=binfmt-support PKG[arch-test]=arch-test
         need+=(qemu-aarch64-static update-binfmts arch-test) ;;
  smoke) need=(qemu-system-x86_64 qemu-img mcopy) ;;
  *) echo "unknown target '$1' (amd64 or arm64)" >&2; exit 2 ;;
esac

missing=()
for tool in "${need[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${PKG[$tool]}")
done
# The smoke run also boots the image through UEFI firmware, as a mini PC does.
[ "${1:-amd64}" = smoke ] && [ ! -f /usr/share/ovmf/OVMF.fd ] && missing+=(ovmf)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing ${missing[*]}" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2; then
  echo "error: could not install the Debian package(s) ${missing[*]}; install them and run again" >&2
  exit 1
fi
for tool in "${need[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: '$tool' (Debian package ${PKG[$tool]}) is still missing" >&2; exit 1; }
done
