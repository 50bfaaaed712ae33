//! The address ranges an outbound call never reaches on its own.
//!
//! Request text picks URLs, so a fetch could otherwise reach the machine itself, the
//! local network or a cloud's metadata service. IPv6 forms that carry an IPv4 address
//! (mapped, compatible, NAT64, 6to4) are judged by the address they carry, because that
//! is where the packets may end up.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Single addresses of metadata services, named before the wider ranges they sit in so
/// that a refusal says what was really at stake.
const V4_METADATA: [(Ipv4Addr, &str); 3] = [
    (
        Ipv4Addr::new(169, 254, 169, 254),
        "the cloud metadata address 169.254.169.254",
    ),
    (
        Ipv4Addr::new(169, 254, 170, 2),
        "the container metadata address 169.254.170.2",
    ),
    (
        Ipv4Addr::new(100, 100, 100, 200),
        "the cloud metadata address 100.100.100.200",
    ),
];

const V4_RANGES: [(u32, u8, &str); 13] = [
    (0x0000_0000, 8, "the unspecified range 0.0.0.0/8"),
    (0x0a00_0000, 8, "the private range 10.0.0.0/8 (RFC 1918)"),
    (0x6440_0000, 10, "the shared (CGNAT) range 100.64.0.0/10"),
    (0x7f00_0000, 8, "the loopback range 127.0.0.0/8"),
    (0xa9fe_0000, 16, "the link-local range 169.254.0.0/16"),
    (
        0xac10_0000,
        12,
        "the private range 172.16.0.0/12 (RFC 1918)",
    ),
    (0xc000_0000, 24, "the IETF protocol range 192.0.0.0/24"),
    (0xc000_0200, 24, "the documentation range 192.0.2.0/24"),
    (
        0xc0a8_0000,
        16,
        "the private range 192.168.0.0/16 (RFC 1918)",
    ),
    (0xc612_0000, 15, "the benchmarking range 198.18.0.0/15"),
    (0xc633_6400, 24, "the documentation range 198.51.100.0/24"),
    (0xcb00_7100, 24, "the documentation range 203.0.113.0/24"),
    (
        0xe000_0000,
        3,
        "the multicast and reserved range 224.0.0.0/3",
    ),
];

const V6_METADATA: (u128, &str) = (
    0xfd00_0ec2_0000_0000_0000_0000_0000_0254,
    "the cloud metadata address fd00:ec2::254",
);

const V6_RANGES: [(u128, u8, &str); 12] = [
    (0, 128, "the unspecified address ::"),
    (1, 128, "the loopback address ::1"),
    (
        0x0064_ff9b_0001_0000_0000_0000_0000_0000,
        48,
        "the local NAT64 range 64:ff9b:1::/48",
    ),
    (
        0x0100_0000_0000_0000_0000_0000_0000_0000,
        64,
        "the discard range 100::/64",
    ),
    (
        0x2001_0002_0000_0000_0000_0000_0000_0000,
        48,
        "the benchmarking range 2001:2::/48",
    ),
    (
        0x2001_0db8_0000_0000_0000_0000_0000_0000,
        32,
        "the documentation range 2001:db8::/32",
    ),
    (
        0x2001_0000_0000_0000_0000_0000_0000_0000,
        32,
        "the Teredo range 2001::/32",
    ),
    (
        0x3fff_0000_0000_0000_0000_0000_0000_0000,
        20,
        "the documentation range 3fff::/20",
    ),
    (
        0xfc00_0000_0000_0000_0000_0000_0000_0000,
        7,
        "the unique local range fc00::/7",
    ),
    (
        0xfe80_0000_0000_0000_0000_0000_0000_0000,
        10,
        "the link-local range fe80::/10",
    ),
    (
        0xfec0_0000_0000_0000_0000_0000_0000_0000,
        10,
        "the site-local range fec0::/10",
    ),
    (
        0xff00_0000_0000_0000_0000_0000_0000_0000,
        8,
        "the multicast range ff00::/8",
    ),
];

/// The refused range `ip` falls in, named for a person; `None` for a public address.
pub fn refused_range(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4).map(str::to_string),
        IpAddr::V6(v6) => v6_range(v6),
    }
}

fn v4_range(ip: Ipv4Addr) -> Option<&'static str> {
    if let Some((_, name)) = V4_METADATA.iter().find(|(a, _)| *a == ip) {
        return Some(name);
    }
    let bits = u32::from(ip);
    V4_RANGES
        .iter()
        .find(|(net, prefix, _)| in_v4(bits, *net, *prefix))
        .map(|(_, _, name)| *name)
}

fn v6_range(ip: Ipv6Addr) -> Option<String> {
    let bits = u128::from(ip);
    if bits == V6_METADATA.0 {
        return Some(V6_METADATA.1.to_string());
    }
    if let Some(v4) = embedded_v4(ip) {
        return v4_range(v4).map(|name| format!("{name} (as {v4} inside IPv6)"));
    }
    V6_RANGES
        .iter()
        .find(|(net, prefix, _)| in_v6(bits, *net, *prefix))
        .map(|(_, _, name)| (*name).to_string())
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped `::ffff:a.b.c.d`, the old
/// IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d` and 6to4 `2002:aabb:ccdd::`. `::` and `::1` carry none.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low = Ipv4Addr::from(u32::try_from(bits & 0xffff_ffff).ok()?);
    let high96 = bits >> 32;
    match high96 {
        0xffff | 0xffff_0000 | 0x0064_ff9b_0000_0000_0000_0000 => Some(low),
        0 if bits > 1 => Some(low),
        _ if bits >> 112 == 0x2002 => {
            let carried = u32::try_from((bits >> 80) & 0xffff_ffff).ok()?;
            Some(Ipv4Addr::from(carried))
        }
        _ => None,
    }
}

fn in_v4(bits: u32, net: u32, prefix: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    bits & mask == net & mask
}

fn in_v6(bits: u128, net: u128, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    bits & mask == net & mask
}

/// Whether `ip` lies in `net/prefix` (both of one family; an IPv4-mapped IPv6 address
/// counts as its IPv4 address).
pub fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip.to_canonical(), net.to_canonical()) {
        (IpAddr::V4(a), IpAddr::V4(n)) => prefix <= 32 && in_v4(u32::from(a), u32::from(n), prefix),
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            prefix <= 128 && in_v6(u128::from(a), u128::from(n), prefix)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(s: &str) -> Option<String> {
        refused_range(s.parse().unwrap())
    }

    #[test]
    fn special_addresses_are_named_and_public_ones_pass() {
        for (ip, want) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("10.1.2.3", "private"),
            ("172.31.0.1", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "CGNAT"),
            ("169.254.169.254", "metadata"),
            ("169.254.1.1", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "224.0.0.0/3"),
            ("198.18.0.1", "benchmarking"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::127.0.0.1", "loopback"),
            ("::ffff:0:10.0.0.1", "private"),
            ("64:ff9b::169.254.169.254", "metadata"),
            ("2002:7f00:1::", "loopback"),
            ("fd12::1", "unique local"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("fd00:ec2::254", "metadata"),
            ("2001:db8::1", "documentation"),
        ] {
            let got = range(ip).unwrap_or_else(|| panic!("{ip} passed"));
            assert!(got.contains(want), "{ip}: {got}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(range(ip), None, "{ip}");
        }
    }

    #[test]
    fn nets_match_across_the_mapped_form() {
        let ip: IpAddr = "::ffff:10.1.2.3".parse().unwrap();
        assert!(in_net(ip, "10.0.0.0".parse().unwrap(), 8));
        assert!(!in_net(ip, "11.0.0.0".parse().unwrap(), 8));
        assert!(in_net(
            "fd00::5".parse().unwrap(),
            "fd00::".parse().unwrap(),
            8
        ));
        assert!(in_net(
            "1.2.3.4".parse().unwrap(),
            "0.0.0.0".parse().unwrap(),
            0
        ));
    }
}
