#!/usr/bin/env bash
# Boot the arm64 image in QEMU (-M virt, TCG) until /api/v1/health answers, then stop it.
# The Pi's own boot path (GPU firmware, config.txt) cannot run in QEMU: this boots the same kernel,
# initrd and root file system through QEMU's virt board, a check that the arm64 system serves.
# A qcow2 overlay keeps the image pristine. Usage: qemu-arm64.sh [timeout seconds, default 300]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$HERE/out/arm64
timeout=${1:-300}
image=$(ls "$OUT"/hausbox-*-arm64.img 2>/dev/null | head -1)
[ -n "$image" ] || { echo "error: no arm64 image in $OUT: make image TARGET=arm64" >&2; exit 1; }
command -v qemu-system-aarch64 >/dev/null || { apt-get install -y -qq qemu-system-arm >&2 || { echo "error: install qemu-system-arm" >&2; exit 1; }; }
work=$(mktemp -d)
trap 'kill "$qemu" 2>/dev/null || true; rm -rf "$work"' EXIT
mcopy -i "$image@@1M" ::vmlinuz ::initrd.img "$work/"
qemu-img create -q -f qcow2 -F raw -b "$image" "$work/disk.qcow2" 3G
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
started=$(date +%s)
qemu-system-aarch64 -M virt -accel tcg -cpu cortex-a53 -smp 2 -m 1024 -display none -no-reboot \
  -serial "file:$OUT/qemu-arm64-serial.log" -monitor none \
  -kernel "$work/vmlinuz" -initrd "$work/initrd.img" -append "root=LABEL=hausbox-root ro rootwait console=ttyAMA0" \
  -drive "file=$work/disk.qcow2,format=qcow2,if=virtio" -device virtio-rng-pci \
  -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-:3000" -device virtio-net-pci,netdev=n0 &
qemu=$!
until curl -sf -m 2 "http://127.0.0.1:$port/api/v1/health" >/dev/null; do
  kill -0 "$qemu" 2>/dev/null || { echo "error: QEMU exited; see $OUT/qemu-arm64-serial.log" >&2; exit 1; }
  [ $(( $(date +%s) - started )) -lt "$timeout" ] || { echo "error: not healthy after $timeout s; see $OUT/qemu-arm64-serial.log" >&2; exit 1; }
  sleep 1
done
echo "arm64 image healthy $(( $(date +%s) - started )) s after QEMU started (setupRequired: $(curl -s "http://127.0.0.1:$port/api/v1/auth/status"))"
