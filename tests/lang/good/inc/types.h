#pragma once
#define HDR_MAGIC 0x55
/* a header */
struct hdr {
	uint16_t len;
	uint8_t flags;
	char tag[5];
};
