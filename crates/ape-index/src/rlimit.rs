//! The two process limits ape-chat sets itself: open files raised for the
//! server's connections, address space capped for a reader worker. Both
//! are best effort: a limit that cannot be changed stays as it was.

/// Raises the soft open-files limit to the hard one (as Go's runtime does
/// at start: the soft default of 1024 is a relic of `select`); returns the
/// soft limit in force.
#[allow(unsafe_code)]
pub fn raise_open_files() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        // An unlimited hard limit still stops at the kernel's nr_open.
        let target = lim.rlim_max.min(1 << 20);
        if lim.rlim_cur < target {
            let raised = libc::rlimit {
                rlim_cur: target,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = target;
            }
        }
    }
    Some(lim.rlim_cur)
}

/// Caps this process's address space at what is mapped now plus `extra`
/// bytes: an allocation past it fails (and a Rust allocation failure
/// aborts the process, which is the point in a worker).
#[allow(unsafe_code)]
pub fn cap_address_space(extra: u64) {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let mapped = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page);
    let limit = mapped.saturating_add(extra);
    let lim = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: setrlimit only reads the struct passed.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &lim);
    }
}
