//! The places of the history's requests, given by priority rather than in the order asked: a
//! run's download before any run's locating, and the newer run first. Fair order (a FIFO
//! semaphore) let the locatings of older runs, asked before the newer runs' downloads, take
//! every place: when they hung, the newest runs, already located, were never downloaded
//! before the deadline.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

use tokio::sync::Notify;

/// What a place is wanted for; a download comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Download,
    Locate,
}

/// Who waits: the step, then the run's position in the history (0 newest), then a number of
/// its own (the same run can never wait twice, but the key stays unique whatever happens).
type Key = (Step, usize, u64);

/// `n` places for single-threaded futures (the history runs on one thread).
pub struct Places {
    free: Cell<usize>,
    waiting: RefCell<BTreeSet<Key>>,
    next: Cell<u64>,
    changed: Notify,
}

/// A place held; given back when dropped.
pub struct Place<'a>(&'a Places);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.free.set(self.0.free.get() + 1);
        self.0.changed.notify_waiters();
    }
}

/// Takes the waiter's key out when the wait ends or is dropped (a deadline, a signal), so that
/// a waiter that left never holds up the others.
struct Waiting<'a> {
    places: &'a Places,
    key: Key,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.places.waiting.borrow_mut().remove(&self.key) {
            // The first waiter may have been behind this one.
            self.places.changed.notify_waiters();
        }
    }
}

impl Places {
    pub fn new(n: usize) -> Places {
        Places {
            free: Cell::new(n.max(1)),
            waiting: RefCell::new(BTreeSet::new()),
            next: Cell::new(0),
            changed: Notify::new(),
        }
    }

    /// A place for `step` of the run at `position` (0 newest), once every waiter before it in
    /// priority order has one.
    pub async fn acquire(&self, step: Step, position: usize) -> Place<'_> {
        let key = (step, position, self.next.get());
        self.next.set(self.next.get() + 1);
        self.waiting.borrow_mut().insert(key);
        let waiting = Waiting { places: self, key };
        loop {
            // Registered before the check: a place given back between the check and the
            // await still wakes this waiter.
            let changed = self.changed.notified();
            let first = self.waiting.borrow().first() == Some(&key);
            if first && self.free.get() > 0 {
                self.free.set(self.free.get() - 1);
                drop(waiting);
                return Place(self);
            }
            changed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// With one place held, downloads are served before locatings, newer runs first,
    /// whatever order they asked in.
    #[test]
    fn downloads_then_locatings_newest_first() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let order = rt.block_on(async {
            let places = Places::new(1);
            let order = Rc::new(RefCell::new(Vec::new()));
            let held = places.acquire(Step::Locate, 0).await;
            let asks = [
                (Step::Locate, 3),
                (Step::Locate, 1),
                (Step::Download, 2),
                (Step::Download, 0),
            ];
            let waiters = asks.map(|(step, position)| {
                let places = &places;
                let order = Rc::clone(&order);
                async move {
                    let _place = places.acquire(step, position).await;
                    order.borrow_mut().push((step, position));
                    tokio::task::yield_now().await;
                }
            });
            let release = async {
                tokio::task::yield_now().await;
                drop(held);
            };
            let [a, b, c, d] = waiters;
            tokio::join!(a, b, c, d, release);
            Rc::try_unwrap(order).unwrap().into_inner()
        });
        assert_eq!(
            order,
            [
                (Step::Download, 0),
                (Step::Download, 2),
                (Step::Locate, 1),
                (Step::Locate, 3)
            ]
        );
    }

    /// A waiter that leaves (its future dropped) does not hold up the ones behind it.
    #[test]
    fn a_waiter_that_leaves_holds_up_nobody() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let places = Places::new(1);
            let held = places.acquire(Step::Locate, 0).await;
            let gone = tokio::time::timeout(
                std::time::Duration::from_millis(10),
                places.acquire(Step::Download, 0),
            )
            .await;
            assert!(gone.is_err());
            drop(held);
            let got = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                places.acquire(Step::Locate, 5),
            )
            .await;
            assert!(got.is_ok());
        });
    }
}
