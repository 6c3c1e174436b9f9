// SPDX-License-Identifier: MIT
/* tochain-region: see tcr_tool.c. */
int tcr_tool_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return tcr_tool_main(argc, argv);
}
