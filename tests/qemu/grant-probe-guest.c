/*
 * A minimal multiboot guest for tests/integration/801_libvirt_revoke.sh:
 * a libvirt domain with no ivshmem device at boot that waits for one to be
 * hot-plugged (td_libvirt_grant), then reads the first 32-bit word of its
 * BAR 2 in a loop and writes a heartbeat counter to word N of it (N from
 * "hb=N" on its command line, so two guests sharing a region write to
 * different words).  It also plays a cooperative guest's part of an ACPI
 * unplug: when the host asks to remove the device (the PIIX4 hot-plug
 * register's "down" bits) it ejects it.
 *
 * Output goes to COM1 (the domain's <serial> file), one line per event:
 *   S ss            device found in slot ss (hex), BAR 2 placed and enabled
 *   R xxxxxxxx      the word read changed to xxxxxxxx
 *   E ss            the host asked for the unplug; ejected
 *   G               the device is gone from the bus
 *
 * SeaBIOS assigns BARs at boot only, so a hot-plugged device's BAR 2 is
 * placed here, at BAR2_ADDR (in the PCI hole of a machine with less than
 * 2 GiB of RAM, far below where SeaBIOS puts the boot devices' BARs).
 * Runs in 32-bit protected mode without paging, as multiboot leaves it.
 *
 * Build: gcc -m32 -ffreestanding -fno-pic -fno-stack-protector -nostdlib
 *        -static -Wl,-Ttext=0x100000 -Wl,--build-id=none -o guest.elf this.c
 */
#include <stdint.h>

#define COM1 0x3f8
#define BAR2_ADDR 0xc0000000u
#define PCIHP_DOWN 0xae04	/* slots the host wants removed (bus 0) */
#define PCIHP_EJECT 0xae08	/* write a slot's bit: eject it */
#define MB_MAGIC 0x2badb002u

/* the multiboot header: magic, flags (none: QEMU loads the ELF), checksum */
__attribute__((section(".text.multiboot"), used, aligned(4)))
static const uint32_t multiboot_header[3] = {
	0x1BADB002, 0, (uint32_t)-(0x1BADB002 + 0)
};

static uint8_t stack[8192] __attribute__((aligned(16), used));

void guest_main(uint32_t magic, const uint32_t *mbi);

__asm__(".globl _start\n"
	"_start:\n"
	"  cli\n"
	"  movl $stack + 8192, %esp\n"
	"  pushl %ebx\n"
	"  pushl %eax\n"
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

static void puts_com(const char *s)
{
	while (*s)
		outb(COM1, (uint8_t)*s++);
}

static void puthex(uint32_t v, int digits)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = (digits - 1) * 4; i >= 0; i -= 4)
		outb(COM1, (uint8_t)hex[(v >> i) & 0xf]);
}

static uint32_t pci_read(unsigned int slot, unsigned int reg)
{
	outl(0xcf8, 0x80000000u | (slot << 11) | reg);
	return inl(0xcfc);
}

static void pci_write(unsigned int slot, unsigned int reg, uint32_t v)
{
	outl(0xcf8, 0x80000000u | (slot << 11) | reg);
	outl(0xcfc, v);
}

/* "hb=N" (N < 256) from the multiboot command line; 1 without one */
static unsigned int heartbeat_word(uint32_t magic, const uint32_t *mbi)
{
	const char *c;
	unsigned int n = 0;

	if (magic != MB_MAGIC || !(mbi[0] & 4) || !mbi[4])
		return 1;
	for (c = (const char *)(uintptr_t)mbi[4]; *c; c++)
		if (c[0] == 'h' && c[1] == 'b' && c[2] == '=')
			break;
	if (!*c)
		return 1;
	for (c += 3; *c >= '0' && *c <= '9' && n < 256; c++)
		n = n * 10 + (unsigned int)(*c - '0');
	return n > 0 && n < 256 ? n : 1;
}

static void delay(void)
{
	uint32_t i;

	for (i = 0; i < 20000; i++)
		__asm__ volatile("pause");
}

/* The first ivshmem device on bus 0, or 32. */
static unsigned int find_ivshmem(void)
{
	unsigned int slot;

	for (slot = 0; slot < 32; slot++)
		if (pci_read(slot, 0) == 0x11101af4)
			return slot;
	return 32;
}

void guest_main(uint32_t magic, const uint32_t *mbi)
{
	volatile uint32_t *bar2 = (volatile uint32_t *)(uintptr_t)BAR2_ADDR;
	unsigned int hb = heartbeat_word(magic, mbi), slot;
	uint32_t last, v, beat = 0;

	puts_com("U hb=");
	puthex(hb, 2);
	puts_com("\n");
	for (;;) {
		while ((slot = find_ivshmem()) == 32)
			delay();
		/* BAR 2 is a 64-bit memory BAR: low then high dword */
		pci_write(slot, 0x18, BAR2_ADDR);
		pci_write(slot, 0x1c, 0);
		pci_write(slot, 0x04, pci_read(slot, 0x04) | 0x2);	/* memory decoding */
		puts_com("S ");
		puthex(slot, 2);
		puts_com("\n");
		last = ~bar2[0];	/* anything but what is there */
		while (pci_read(slot, 0) == 0x11101af4) {
			if (inl(PCIHP_DOWN) & (1u << slot)) {
				puts_com("E ");
				puthex(slot, 2);
				puts_com("\n");
				outl(PCIHP_EJECT, 1u << slot);
				continue;
			}
			v = bar2[0];
			if (v != last) {
				puts_com("R ");
				puthex(v, 8);
				puts_com("\n");
				last = v;
			}
			bar2[hb] = ++beat;
			delay();
		}
		puts_com("G\n");
	}
}
