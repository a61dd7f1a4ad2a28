/*
 * dpu_bank_interface_pmc.h: bank-interface performance counters (upmem-sim's libdpu-compatible headers).
 *
 * dpu.h includes this header, as the SDK's does. The hardware's bank-interface PMC API
 * (dpu_bank_interface_pmc_*) has no meaning in upmem-sim and is not declared.
 */
#ifndef UPMEM_SIM_DPU_BANK_INTERFACE_PMC_H
#define UPMEM_SIM_DPU_BANK_INTERFACE_PMC_H

#include <dpu_types.h>

#endif /* UPMEM_SIM_DPU_BANK_INTERFACE_PMC_H */
