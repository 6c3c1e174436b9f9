// SPDX-License-Identifier: MIT
#include <errno.h>

#include "hs_early.h"

int hs_rxwin_init(struct hs_rxwin *win, uint32_t w)
{
	uint32_t i;

	if (!win || w == 0 || w > HS_RXWIN_MAX)
		return -EINVAL;
	win->w = w;
	win->n = 0;
	win->next = 0;
	win->sum = 0;
	for (i = 0; i < HS_RXWIN_MAX; i++)
		win->r[i] = 0;
	return 0;
}

void hs_rxwin_push(struct hs_rxwin *win, uint64_t received)
{
	if (win->n == win->w)
		win->sum -= win->r[win->next];
	else
		win->n++;
	win->r[win->next] = received;
	win->sum += received;
	win->next = (win->next + 1) % win->w;
}

bool hs_rxwin_record(struct hs_rxwin *win, uint64_t received, bool saturated)
{
	if (!saturated)
		return false;
	hs_rxwin_push(win, received);
	return true;
}

double hs_rxwin_mean(const struct hs_rxwin *win)
{
	return win->n ? (double)win->sum / win->n : 0.0;
}

enum hs_early_reason hs_early_end(uint64_t inq, uint64_t outq,
				  const struct hs_rxwin *win)
{
	if (inq == 0)
		return HS_EARLY_INPUT_EMPTY;
	if (win && win->n > 0 && outq > 0 &&
	    (unsigned __int128)outq * win->n >= win->sum)
		return HS_EARLY_OUTPUT_FULL;
	return HS_EARLY_NO;
}
