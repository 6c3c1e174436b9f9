/*
 * A minimal multiboot guest for tests/integration/800_qemu_revoke.sh: it
 * finds the first ivshmem device on PCI bus 0 and loops forever reading
 * the first 32-bit word of its BAR 2 and writing a heartbeat counter to
 * the word at offset 4 * (its PCI slot).  Every change of the word it
 * reads is reported on the debug console (port 0xe9) as "R xxxxxxxx".
 * So the host sees both directions: what the guest can read, and whether
 * the guest's writes reach the region.
 *
 * Build: gcc -m32 -ffreestanding -fno-pic -fno-stack-protector -nostdlib
 *        -static -Wl,-Ttext=0x100000 -Wl,--build-id=none -o guest.elf this.c
 * Runs in 32-bit protected mode without paging, as multiboot leaves it, so
 * BAR 2 must lie below 4 GiB (SeaBIOS puts a 1 MiB BAR there).
 */
#include <stdint.h>

#define DEBUGCON 0xe9

/* the multiboot header: magic, flags (none: QEMU loads the ELF), checksum */
__attribute__((section(".text.multiboot"), used, aligned(4)))
static const uint32_t multiboot_header[3] = {
	0x1BADB002, 0, (uint32_t)-(0x1BADB002 + 0)
};

static uint8_t stack[8192] __attribute__((aligned(16), used));

void guest_main(void);

__asm__(".globl _start\n"
	"_start:\n"
	"  cli\n"
	"  movl $stack + 8192, %esp\n"
	"  call guest_main\n"
	"1: hlt\n"
	"  jmp 1b\n");

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static void puts_dbg(const char *s)
{
	while (*s)
		outb(DEBUGCON, (uint8_t)*s++);
}

static void puthex(uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 28; i >= 0; i -= 4)
		outb(DEBUGCON, (uint8_t)digits[(v >> i) & 0xf]);
}

static uint32_t pci_read(unsigned int slot, unsigned int reg)
{
	outl(0xcf8, 0x80000000u | (slot << 11) | reg);
	return inl(0xcfc);
}

void guest_main(void)
{
	volatile uint32_t *bar2;
	uint32_t last, v, beat = 0;
	unsigned int slot;

	for (slot = 0; slot < 32; slot++)
		if (pci_read(slot, 0) == 0x11101af4)
			break;
	if (slot == 32) {
		puts_dbg("E no ivshmem\n");
		return;
	}
	if (pci_read(slot, 0x1c) != 0 || (pci_read(slot, 0x18) & ~0xfu) == 0) {
		puts_dbg("E BAR 2 not below 4 GiB\n");
		return;
	}
	bar2 = (volatile uint32_t *)(uintptr_t)(pci_read(slot, 0x18) & ~0xfu);
	puts_dbg("S ");
	puthex(slot);
	puts_dbg("\n");

	last = ~bar2[0];        /* anything but what is there */
	for (;;) {
		v = bar2[0];
		if (v != last) {
			puts_dbg("R ");
			puthex(v);
			puts_dbg("\n");
			last = v;
		}
		bar2[slot] = ++beat;
		for (v = 0; v < 20000; v++)
			__asm__ volatile("pause");
	}
}
