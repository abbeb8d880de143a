/*
 * usbirq.c: the interrupt load of a pico-sdk program that has USB stdio
 * and prints nothing while an operation runs ([build] usb_irq_us, built
 * with USB_IRQ_US = the period in microseconds). Written from the SDK's
 * and TinyUSB's source, function by function; not the SDK's code, and
 * untested on hardware.
 *
 * What the SDK does. stdio_usb_init (pico-sdk src/rp2_common/
 * pico_stdio_usb/stdio_usb.c) adds a repeating alarm to the default alarm
 * pool (src/common/pico_time/time.c; hardware alarm 3, TIMER_IRQ_3) every
 * PICO_STDIO_USB_TASK_INTERVAL_US, 1000 us (include/pico/stdio_usb.h).
 * The alarm's callback, timer_task, pends a spare IRQ (user IRQ 31) whose
 * handler, low_priority_worker_irq, takes stdio_usb_mutex with
 * mutex_try_enter, calls TinyUSB's tud_task (src/device/usbd.c,
 * tud_task_ext), which finds its event queue empty while the bus is idle,
 * and gives the mutex back. This is every pico-sdk 1.x release's path
 * before 1.4.0; from 1.4.0 on the SDK takes it only when TinyUSB's USB
 * interrupt handler is not a shared one, and the TinyUSB it ships
 * registers a shared one (dcd_rp2040.c, dcd_init), so that tud_task then
 * runs after USB interrupts instead, and an idle bus costs nothing.
 *
 * Per tick this file does the same steps with code of its own:
 *  - TIMER_IRQ_3 (hardware_timer/timer.c, hardware_alarm_irq_handler): the
 *    alarm number from IPSR, the timer's spin lock (interrupts off, an
 *    SIO spinlock), its interrupt cleared, the alarm checked pending and
 *    its high word reached, the lock released, the pool's callback called;
 *  - the pool (time.c, alarm_pool_alarm_callback): the time read, the
 *    pool's lock, the heap's head peeked and removed (pico_util/pheap.c,
 *    ph_remove_head), the lock released, the callback called (timer_task:
 *    the IRQ checked enabled in the NVIC and pended), the lock again, the
 *    alarm added again 1000 us from now (add_alarm_under_lock:
 *    ph_insert_node, then hardware_alarm_set_target: the time, the timer
 *    lock, the interrupt cleared, ALARM3 written, ARMED checked, the time
 *    again, the lock released), the lock released; then the loop once more,
 *    which finds the head in the future and sets the target again;
 *  - IRQ 31 (stdio_usb.c, low_priority_worker_irq): mutex_try_enter
 *    (pico_sync/mutex.c: spin lock, owner checked, CPUID read as the new
 *    owner, unlock), tud_task (stack initialised? the queue read under a
 *    critical section, osal_pico.h osal_queue_receive, its FIFO's count
 *    found zero, tusb_fifo.c), mutex_exit (spin lock, owner cleared, SEV,
 *    unlock). Both IRQs at the SDK's default priority, 0x80
 *    (hardware_irq irq_init_priorities).
 * The mutex functions run from SRAM, as the SDK's __time_critical_func
 * puts them; the rest is ordinary .text (flash in a flash image).
 *
 * Not modelled: USB traffic (the firmware prints on UART0, between
 * operations), so no USB interrupt and no event for tud_task; a pool with
 * other alarms in its heap; the SDK's vector table in SRAM (ours stays in
 * the image); and the Cortex-M0+'s tail-chaining from TIMER_IRQ_3 into
 * IRQ 31, which rp2040js and our timing layer take as a return and a new
 * entry of 15 cycles (the TRM gives no tail-chaining figure).
 */
#include <stdbool.h>
#include <stdint.h>

#include "board.h"
#include "rp2040.h"

#ifndef USB_IRQ_US
#error "build with -DUSB_IRQ_US (picoboard.Build, [build] usb_irq_us)"
#endif

/* RP2040 datasheet 2.3.1.7 (SIO), 4.6.5 (TIMER), Armv6-M B3.4 (NVIC). */
#define SIO_CPUID 0xd0000000u
#define SIO_SPINLOCK(n) (0xd0000100u + 4u * (n))
#define TIMER_ALARM(n) (TIMER_BASE + 0x10u + 4u * (n))
#define TIMER_ARMED (TIMER_BASE + 0x20u)
#define TIMER_INTR (TIMER_BASE + 0x34u)
#define TIMER_INTE (TIMER_BASE + 0x38u)
#define NVIC_ISER 0xe000e100u
#define NVIC_ISPR 0xe000e200u
#define NVIC_IPR(irq) (0xe000e400u + ((irq) & ~3u))

#define ALARM_NUM 3u   /* PICO_TIME_DEFAULT_ALARM_POOL_HARDWARE_ALARM_NUM */
#define LOW_IRQ 31u    /* PICO_STDIO_USB_LOW_PRIORITY_IRQ before SDK 1.4 */
#define IRQ_PRIO 0x80u /* PICO_DEFAULT_IRQ_PRIORITY */
/* Spin locks: the SDK's PICO_SPINLOCK_ID_TIMER, then striped ones. */
#define LOCK_TIMER 10u
#define LOCK_POOL 16u
#define LOCK_MUTEX 17u
#define LOCK_QUEUE 18u

#define TIME_CRITICAL __attribute__((noinline, section(".time_critical.usbirq")))
#define CALL __attribute__((noinline))

/* ---- spin locks (hardware_sync spin_lock_blocking, spin_unlock) ---- */

static inline uint32_t lock_take(uint32_t n) {
    uint32_t save;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(save)::"memory");
    while (REG(SIO_SPINLOCK(n)) == 0) {
    }
    __asm__ volatile("dmb" ::: "memory");
    return save;
}

static inline void lock_give(uint32_t n, uint32_t save) {
    __asm__ volatile("dmb" ::: "memory");
    REG(SIO_SPINLOCK(n)) = 0;
    __asm__ volatile("msr primask, %0" ::"r"(save) : "memory");
}

/* ---- the hardware alarm (timer.c) ---- */

typedef void (*alarm_cb_t)(uint32_t alarm);
static alarm_cb_t alarm_callback;
static uint32_t target_hi;
static volatile uint8_t alarm_pending;

/* alarm_set arms ALARM_NUM at t; it returns true when t has passed. */
static CALL bool alarm_set(uint64_t t) {
    if (time_us() >= t) {
        return true;
    }
    bool missed = false;
    uint32_t save = lock_take(LOCK_TIMER);
    alarm_pending |= 1u << ALARM_NUM;
    REG(TIMER_INTR) = 1u << ALARM_NUM;
    REG(TIMER_ALARM(ALARM_NUM)) = (uint32_t)t;
    target_hi = (uint32_t)(t >> 32);
    if ((REG(TIMER_ARMED) & (1u << ALARM_NUM)) && time_us() >= t) {
        missed = true;
    }
    lock_give(LOCK_TIMER, save);
    return missed;
}

void timer_irq3_handler(void) {
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    uint32_t alarm = (ipsr & 0x3fu) - 16u;
    alarm_cb_t cb = 0;
    uint32_t save = lock_take(LOCK_TIMER);
    REG(TIMER_INTR) = 1u << alarm;
    if (alarm_pending & (1u << alarm)) {
        if (REG(TIMER_RAWH) >= target_hi) {
            cb = alarm_callback;
            alarm_pending &= (uint8_t)~(1u << alarm);
        } else {
            REG(TIMER_ALARM(alarm)) = REG(TIMER_ALARM(alarm));
        }
    }
    lock_give(LOCK_TIMER, save);
    if (cb) {
        cb(alarm);
    }
}

/* ---- the alarm pool with its one alarm (time.c, pheap.c) ---- */

typedef int64_t (*pool_cb_t)(int32_t id, void *user);
typedef struct {
    uint8_t child, sibling, parent;
} heap_node_t;
static struct {
    heap_node_t node[1];
    uint8_t root;
    uint64_t target;
    pool_cb_t callback;
    void *user;
    uint8_t id_high;
    volatile int32_t in_progress;
} pool;

/* heap_remove_head removes the root (ph_remove_head without freeing): its
 * children merged in two passes, here none. */
static CALL uint8_t heap_remove_head(void) {
    uint8_t id = pool.root;
    heap_node_t *n = &pool.node[id - 1];
    uint8_t new_root = n->child; /* ph_merge_two_pass of a lone child list */
    if (new_root) {
        pool.node[new_root - 1].parent = 0;
    }
    n->sibling = 0;
    pool.root = new_root;
    return id;
}

/* heap_insert makes id a one-node heap and merges it with the root's
 * (ph_insert_node, ph_merge_nodes): with one alarm the heap is empty. */
static inline uint8_t heap_insert(uint8_t id) {
    heap_node_t *n = &pool.node[id - 1];
    n->child = n->sibling = n->parent = 0;
    if (!pool.root) {
        pool.root = id;
    }
    return pool.root;
}

static void pool_callback(uint32_t alarm) {
    (void)alarm;
    bool again;
    do {
        uint64_t now = time_us();
        pool_cb_t cb = 0;
        void *user = 0;
        int32_t id = 0;
        again = false;
        uint32_t save = lock_take(LOCK_POOL);
        uint8_t next = pool.root;
        if (next) {
            if ((int64_t)(pool.target - now) <= 0) {
                heap_remove_head();
                cb = pool.callback;
                user = pool.user;
                id = (int32_t)((uint32_t)pool.id_high << 8 | next);
                pool.in_progress = id;
            } else if (alarm_set(pool.target)) {
                again = true;
            }
        }
        lock_give(LOCK_POOL, save);
        if (cb) {
            int64_t repeat = cb(id, user);
            save = lock_take(LOCK_POOL);
            if (repeat > 0 && pool.in_progress) {
                pool.target = time_us() + (uint64_t)repeat;
                if (heap_insert(next) == next) {
                    alarm_set(pool.target);
                }
            }
            pool.in_progress = 0;
            lock_give(LOCK_POOL, save);
            again = true;
        }
    } while (again);
}

/* ---- stdio_usb's timer task and worker IRQ ---- */

static CALL int64_t timer_task(int32_t id, void *user) {
    (void)id;
    (void)user;
    if (REG(NVIC_ISER) & (1u << LOW_IRQ)) {
        REG(NVIC_ISPR) = 1u << LOW_IRQ;
        return USB_IRQ_US;
    }
    return 0;
}

/* The mutex (pico_sync/mutex.c): an owner, -1 when free. */
static struct {
    volatile int8_t owner;
} usb_mutex = {-1};

TIME_CRITICAL static bool mutex_try_enter(void) {
    bool entered;
    uint32_t save = lock_take(LOCK_MUTEX);
    if (usb_mutex.owner < 0) {
        usb_mutex.owner = (int8_t)REG(SIO_CPUID);
        entered = true;
    } else {
        entered = false;
    }
    lock_give(LOCK_MUTEX, save);
    return entered;
}

TIME_CRITICAL static void mutex_exit(void) {
    uint32_t save = lock_take(LOCK_MUTEX);
    usb_mutex.owner = -1;
    __asm__ volatile("sev");
    lock_give(LOCK_MUTEX, save);
}

/* TinyUSB's event queue: a FIFO of events, empty while the bus is idle
 * (tusb_fifo.c: the count from the write and read indices, which run over
 * twice the depth). */
#define QUEUE_DEPTH 16u
static struct {
    volatile uint16_t wr_idx, rd_idx;
    uint16_t depth;
    uint8_t buf[QUEUE_DEPTH * 12u];
} usbd_queue = {.depth = QUEUE_DEPTH};
static volatile uint8_t usbd_rhport = 0; /* initialised: not RHPORT_INVALID */

static CALL bool fifo_read(void *out) {
    uint16_t w = usbd_queue.wr_idx, r = usbd_queue.rd_idx;
    uint16_t count = (uint16_t)(w >= r ? w - r : 2u * usbd_queue.depth - (r - w));
    if (count == 0) {
        return false;
    }
    (void)out; /* never reached: no event is ever queued */
    return true;
}

static CALL bool queue_receive(void *out) {
    uint32_t save = lock_take(LOCK_QUEUE);
    bool ok = fifo_read(out);
    lock_give(LOCK_QUEUE, save);
    return ok;
}

static CALL bool tusb_inited(void) {
    return usbd_rhport != 0xffu;
}

static CALL void tud_task(void) {
    if (!tusb_inited()) {
        return;
    }
    uint8_t event[12];
    while (queue_receive(event)) {
    }
}

void usb_worker_irq(void) {
    if (mutex_try_enter()) {
        tud_task();
        mutex_exit();
    }
}

/* usb_irq_start sets both IRQs up as the SDK leaves them and adds the
 * repeating alarm, its first tick USB_IRQ_US from now. */
void usb_irq_start(void) {
    REG(NVIC_IPR(ALARM_NUM)) = (REG(NVIC_IPR(ALARM_NUM)) & ~(0xffu << (8u * (ALARM_NUM & 3u)))) | (IRQ_PRIO << (8u * (ALARM_NUM & 3u)));
    REG(NVIC_IPR(LOW_IRQ)) = (REG(NVIC_IPR(LOW_IRQ)) & ~(0xffu << (8u * (LOW_IRQ & 3u)))) | (IRQ_PRIO << (8u * (LOW_IRQ & 3u)));
    alarm_callback = pool_callback;
    REG(TIMER_INTE) |= 1u << ALARM_NUM;
    REG(NVIC_ISER) = (1u << ALARM_NUM) | (1u << LOW_IRQ);
    pool.root = 1;
    pool.callback = timer_task;
    pool.target = time_us() + USB_IRQ_US;
    alarm_set(pool.target);
}
