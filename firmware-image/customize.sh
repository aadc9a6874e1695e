#!/usr/bin/env bash
# mmdebstrap customize hook: runs on the build host with the finished root file system as $1.
# Installs the hausbox release from the wheels copied to /tmp/wheels, enables the units, removes
# everything that would make two boxes from one image share an identity, and stages the boot files.
# Usage: customize.sh ROOTFS VERSION TARGET BOOTDIR
set -euo pipefail
rootfs=$1 version=$2 target=$3 bootdir=$4
release=/opt/hausbox/releases/$version

# The release slot (hausbox/updater layout): a venv from our wheels only, marked complete last.
chroot "$rootfs" python3 -m venv "$release"
chroot "$rootfs" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin PIP_CONFIG_FILE=/dev/null PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$release/bin/pip" install --quiet --no-index --no-cache-dir --find-links /tmp/wheels "hausbox==$version"
chroot "$rootfs" "$release/bin/python" -c "import hausbox, sys; sys.exit(hausbox.__version__ != '$version')"
echo "$version" > "$rootfs$release/.complete"
ln -sfn "releases/$version" "$rootfs/opt/hausbox/current"
rm -rf "$rootfs/tmp/wheels"
mkdir -p "$rootfs/var/lib/hausbox"

chroot "$rootfs" systemctl enable --quiet hausbox.service hausbox-recover.service hausbox-grow-data.service hausbox-smoke-agent.service \
  systemd-networkd.service systemd-resolved.service systemd-timesyncd.service
# systemd-firstboot would prompt on the console for a locale and a root password on first boot.
chroot "$rootfs" systemctl mask --quiet systemd-firstboot.service
# Nothing an appliance runs: apt never upgrades it (releases do, see hausbox/updater), there is no
# LVM for e2scrub to snapshot. Each took CPU from the service's first start.
chroot "$rootfs" systemctl mask --quiet apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
  e2scrub_all.timer e2scrub_reap.service

# Name resolution through systemd-resolved (fed by networkd's DHCP), not the build host's file.
ln -sfn ../run/systemd/resolve/stub-resolv.conf "$rootfs/etc/resolv.conf"

# No identity in the image: systemd makes the machine id at first boot (an empty file means "first
# boot"), no random seed, no host keys (no ssh server at all), and root has no password (locked).
: > "$rootfs/etc/machine-id"
rm -f "$rootfs/var/lib/dbus/machine-id" "$rootfs/var/lib/systemd/random-seed" "$rootfs"/etc/ssh/ssh_host_*
grep -q '^root:[*!]' "$rootfs/etc/shadow" || chroot "$rootfs" passwd --quiet --lock root

# Boot files for the vfat partition.
mkdir -p "$bootdir"
# nodelalloc: pip's files in a new release slot reach the disk before the journal commits the
# current-link switch that follows them (with delayed allocation, a power cut right after an update
# could leave the switched-to release with empty files). The root file system is rarely written.
cmdline="root=LABEL=hausbox-root ro rootwait rootflags=nodelalloc quiet"
case "$target" in
  amd64)
    cp "$(ls "$rootfs"/boot/vmlinuz-* | sort -V | tail -1)" "$bootdir/vmlinuz"
    cp "$(ls "$rootfs"/boot/initrd.img-* | sort -V | tail -1)" "$bootdir/initrd.img"
    # UEFI: systemd-boot as the removable-media loader, one entry, no menu.
    mkdir -p "$bootdir/EFI/BOOT" "$bootdir/loader/entries"
    cp "$rootfs/usr/lib/systemd/boot/efi/systemd-bootx64.efi" "$bootdir/EFI/BOOT/BOOTX64.EFI"
    printf 'default hausbox.conf\ntimeout 0\n' > "$bootdir/loader/loader.conf"
    printf 'title hausbox %s\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s console=tty0 console=ttyS0,115200\n' \
      "$version" "$cmdline" > "$bootdir/loader/entries/hausbox.conf"
    echo "$cmdline console=tty0 console=ttyS0,115200" > "$bootdir/cmdline.txt"
    ;;
  arm64)
    # raspi-firmware's kernel hooks filled /boot/firmware: GPU firmware, device trees, kernel, initrd.
    cp -r "$rootfs"/boot/firmware/. "$bootdir/"
    cp "$(ls "$rootfs"/boot/vmlinuz-* | sort -V | tail -1)" "$bootdir/vmlinuz"
    cp "$(ls "$rootfs"/boot/initrd.img-* | sort -V | tail -1)" "$bootdir/initrd.img"
    cat > "$bootdir/config.txt" <<CONFIG
# Raspberry Pi 4/5 (64-bit): Debian's kernel and initrd, the device trees beside them.
arm_64bit=1
enable_uart=1
upstream_kernel=1
kernel=vmlinuz
initramfs initrd.img followkernel
disable_overscan=1
CONFIG
    echo "$cmdline console=tty0 console=ttyS1,115200" > "$bootdir/cmdline.txt"
    rm -rf "$rootfs"/boot/firmware/*
    ;;
esac
