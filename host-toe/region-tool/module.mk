# host-toe/region-tool: tochain-region, a region file as the host sees it.
$(eval $(call program,tochain-region,$(call objs,host-toe/region-tool/tcr_tool.c host-toe/region-tool/tcr_tool_main.c) $(REGION_LIB)))
